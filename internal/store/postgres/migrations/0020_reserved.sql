-- 0020: kept for a change made beside this one (its file takes this number
-- when both are merged, and this one is removed).
SELECT 1;
