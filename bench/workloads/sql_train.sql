-- sql_train.sql - the training workload of bench/pgo.py for SQLite: bulk
-- inserts through a recursive CTE, an index build, joins and grouping.
-- bench/pgo.py replaces {{N}} with the row count.
CREATE TABLE item(id INTEGER PRIMARY KEY, grp INTEGER, price REAL, name TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {{N}})
INSERT INTO item(id, grp, price, name) SELECT i, i % 97, (i * 7919 % 10007) / 100.0, 'item' || i FROM c;
CREATE INDEX item_grp ON item(grp, price);
CREATE TABLE grp(id INTEGER PRIMARY KEY, label TEXT);
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 96)
INSERT INTO grp(id, label) SELECT i, 'group' || i FROM c;
SELECT g.label, COUNT(*), SUM(i.price), MAX(i.price) FROM item i JOIN grp g ON g.id = i.grp GROUP BY g.label ORDER BY 3 DESC LIMIT 5;
SELECT COUNT(*) FROM item a JOIN item b ON b.grp = a.grp AND b.price > a.price + 99 WHERE a.id % 50 = 0;
SELECT grp, AVG(price) FROM item WHERE price BETWEEN 10 AND 20 GROUP BY grp ORDER BY grp LIMIT 3;
