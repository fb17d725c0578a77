-- sql_train.sql - the training workload of bench/pgo.py for SQLite. The same
-- kinds of work as sql_eval.sql on other tables and queries: bulk inserts
-- through a recursive CTE, index builds, joins and grouping, text functions
-- and pattern matching, window functions, sorting, a recursive walk, and
-- updates and deletes in a transaction. (A training run without text or
-- window functions would mark those paths cold for the compiler.)
-- bench/pgo.py replaces {{N}} with the row count.
CREATE TABLE item(id INTEGER PRIMARY KEY, grp INTEGER, parent INTEGER, price REAL, name TEXT, tag TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {{N}})
INSERT INTO item SELECT i, i % 97, i / 3, (i * 7919 % 10007) / 100.0, 'item' || i,
  lower(hex(i * 2246822519 % 4294967291)) FROM c;
CREATE INDEX item_grp ON item(grp, price);
CREATE TABLE grp(id INTEGER PRIMARY KEY, label TEXT);
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 96)
INSERT INTO grp(id, label) SELECT i, printf('Group-%02d', i) FROM c;
SELECT g.label, COUNT(*), SUM(i.price), MAX(i.price) FROM item i JOIN grp g ON g.id = i.grp GROUP BY g.label ORDER BY 3 DESC LIMIT 5;
SELECT COUNT(*) FROM item a JOIN item b ON b.grp = a.grp AND b.price > a.price + 99 WHERE a.id % 50 = 0;
SELECT grp, AVG(price) FROM item WHERE price BETWEEN 10 AND 20 GROUP BY grp ORDER BY grp LIMIT 3;
SELECT COUNT(*), SUM(length(tag)) FROM item WHERE tag LIKE '%b7%' OR name GLOB 'item1*9';
SELECT upper(substr(tag, 1, 3)), COUNT(*), length(group_concat(id % 7, '')) FROM item GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3;
SELECT id, price, dense_rank() OVER (PARTITION BY grp ORDER BY price) AS r,
  SUM(price) OVER (PARTITION BY grp ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s
  FROM item ORDER BY s DESC, id LIMIT 3;
SELECT tag, name FROM item ORDER BY tag DESC, name LIMIT 2;
WITH RECURSIVE up(id, depth) AS (SELECT id, 0 FROM item WHERE id = {{N}}
  UNION ALL SELECT i.parent, depth + 1 FROM item i JOIN up ON i.id = up.id WHERE i.parent > 0)
SELECT MAX(depth) FROM up;
BEGIN;
UPDATE item SET price = price * 1.1 WHERE grp % 5 = 0;
DELETE FROM item WHERE price > 90;
COMMIT;
SELECT COUNT(*), ROUND(SUM(price), 2) FROM item;
