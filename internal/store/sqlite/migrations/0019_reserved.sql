-- 0019: reserved for the hosts migration, which takes this number;
-- this file goes when that one lands.
SELECT 1;
