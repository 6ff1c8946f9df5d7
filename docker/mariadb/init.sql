-- Runs once, when the mariadb container initialises an empty datadir (docker/mariadb/entrypoint.sh).
-- The monitoring login: PROCESS is what Poolscope needs (INNODB_TRX, other users' PROCESSLIST rows).
CREATE USER IF NOT EXISTS 'poolscope'@'%' IDENTIFIED BY 'monitor-demo';
GRANT PROCESS, REPLICATION CLIENT ON *.* TO 'poolscope'@'%';
GRANT SELECT ON performance_schema.* TO 'poolscope'@'%';

-- A load-generation login and database (sysbench / poolscope_dev.loadgen from the host).
CREATE DATABASE IF NOT EXISTS sbtest;
CREATE USER IF NOT EXISTS 'sbtest'@'%' IDENTIFIED BY 'sbtest-demo';
GRANT ALL PRIVILEGES ON sbtest.* TO 'sbtest'@'%';
