-- 0016: reserved for the templates migration, which takes this number;
-- this file goes when that one lands.
SELECT 1;
