-- sql_eval.sql - the evaluation workload of bench/pgo.py for SQLite: text
-- functions and LIKE, window functions, sorting, a hierarchy walk, updates
-- and deletes in a transaction. Not the training workload.
-- bench/pgo.py replaces {{N}} with the row count.
CREATE TABLE person(id INTEGER PRIMARY KEY, boss INTEGER, city TEXT, score INTEGER, note TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {{N}})
INSERT INTO person SELECT i, i / 4, printf('city%03d', i % 211), (i * 2654435761) % 1000, hex(i * 40503 * 65537 % 4294967291) FROM c;
SELECT city, score, rank() OVER (PARTITION BY city ORDER BY score DESC) AS r FROM person ORDER BY score DESC, id LIMIT 3;
SELECT COUNT(*) FROM person WHERE note LIKE '%A1%' OR upper(city) LIKE 'CITY1_%';
SELECT substr(city, 5), SUM(length(note)), length(group_concat(score % 10, '')) FROM person GROUP BY 1 ORDER BY 2 DESC LIMIT 2;
WITH RECURSIVE chain(id, depth) AS (SELECT id, 0 FROM person WHERE id = {{N}}
  UNION ALL SELECT p.boss, depth + 1 FROM person p JOIN chain ON p.id = chain.id WHERE p.boss > 0)
SELECT MAX(depth) FROM chain;
BEGIN;
UPDATE person SET score = score + 1 WHERE id % 3 = 0;
DELETE FROM person WHERE score < 100;
COMMIT;
SELECT COUNT(*), SUM(score) FROM person;
