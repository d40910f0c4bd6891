-- sys.dm_exec_connections (a session inside the process is a shared-memory connection;
-- TCP connections are checked by the go-mssqldb client suite), the transaction DMVs,
-- SET LANGUAGE, DBCC USEROPTIONS, fn_helpcollations() and COLLATIONPROPERTY.
SET NOCOUNT ON;
SELECT CASE WHEN session_id = @@SPID AND most_recent_session_id = @@SPID THEN 'own' END AS session,
       net_transport, protocol_type, protocol_version, endpoint_id, encrypt_option, auth_scheme,
       client_net_address, client_tcp_port, local_net_address, net_packet_size,
       CASE WHEN connect_time <= GETDATE() AND connection_id IS NOT NULL THEN 'yes' END AS connected
  FROM sys.dm_exec_connections;
-- The connection id is the one dm_exec_requests shows for the running request.
SELECT CASE WHEN r.connection_id = c.connection_id THEN 'same' END AS connection_id
  FROM sys.dm_exec_requests AS r JOIN sys.dm_exec_connections AS c ON c.session_id = r.session_id
 WHERE r.session_id = @@SPID;
GO
-- No user transaction: no rows (the statement's own autocommit transaction is not listed).
SELECT COUNT(*) AS session_transactions FROM sys.dm_tran_session_transactions;
SELECT COUNT(*) AS active_transactions FROM sys.dm_tran_active_transactions;
BEGIN TRANSACTION Outer_Tran;
SELECT CASE WHEN session_id = @@SPID THEN 'own' END AS session, transaction_descriptor, enlist_count,
       is_user_transaction, is_local, is_enlisted, is_bound, open_transaction_count
  FROM sys.dm_tran_session_transactions;
BEGIN TRANSACTION;
SELECT open_transaction_count FROM sys.dm_tran_session_transactions;
SELECT a.name, a.transaction_type, a.transaction_state, a.dtc_state,
       CASE WHEN a.transaction_begin_time <= GETDATE() THEN 'begun' END AS begin_time,
       CASE WHEN a.transaction_id = s.transaction_id THEN 'same' END AS transaction_id,
       CASE WHEN a.transaction_id = r.transaction_id THEN 'same' END AS request_transaction
  FROM sys.dm_tran_active_transactions AS a
  JOIN sys.dm_tran_session_transactions AS s ON s.transaction_id = a.transaction_id
  JOIN sys.dm_exec_requests AS r ON r.session_id = s.session_id;
COMMIT;
COMMIT;
SELECT COUNT(*) AS after_commit FROM sys.dm_tran_session_transactions;
BEGIN TRANSACTION;
ROLLBACK;
SELECT COUNT(*) AS after_rollback FROM sys.dm_tran_active_transactions;
GO
-- SET LANGUAGE: by name or alias, from a variable; it sets DATEFIRST; Msg 2740 for an
-- unknown language (the language stays).
SELECT @@LANGUAGE AS language, @@DATEFIRST AS datefirst;
SET LANGUAGE British;
SELECT @@LANGUAGE AS language, @@DATEFIRST AS datefirst, DATEPART(weekday, '2024-01-01') AS monday;
SELECT language FROM sys.dm_exec_sessions WHERE session_id = @@SPID;
DECLARE @l sysname = N'Russian';
SET LANGUAGE @l;
SELECT CASE WHEN @@LANGUAGE = N'русский' THEN 'russian' END AS language;
SET LANGUAGE Klingon;
GO
SELECT CASE WHEN @@LANGUAGE = N'русский' THEN 'still russian' END AS language;
SET LANGUAGE us_english;
SELECT @@LANGUAGE AS language, @@DATEFIRST AS datefirst;
GO
-- DBCC USEROPTIONS: the session's SET options.
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;
SET XACT_ABORT ON;
SET LOCK_TIMEOUT 1500;
DBCC USEROPTIONS;
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
SET XACT_ABORT OFF;
SET LOCK_TIMEOUT -1;
DBCC USEROPTIONS WITH NO_INFOMSGS;
GO
DBCC USEROPTIONS (1);
GO
-- Collations: the SQL ones and the Latin1_General family (docs/architecture.md).
SELECT COUNT(*) AS collations FROM sys.fn_helpcollations();
SELECT name, description FROM sys.fn_helpcollations()
 WHERE name IN ('SQL_Latin1_General_CP1_CI_AS', 'Latin1_General_CS_AS_KS_WS', 'Latin1_General_100_BIN2',
                'Latin1_General_100_CI_AI_SC_UTF8', 'Latin1_General_BIN')
 ORDER BY name;
SELECT name, COLLATIONPROPERTY(name, 'CodePage') AS code_page, COLLATIONPROPERTY(name, 'LCID') AS lcid,
       COLLATIONPROPERTY(name, 'ComparisonStyle') AS comparison_style, COLLATIONPROPERTY(name, 'SortId') AS sort_id,
       COLLATIONPROPERTY(name, 'Version') AS version, COLLATIONPROPERTY(name, 'NoSuchProperty') AS other
  FROM fn_helpcollations()
 WHERE name IN ('SQL_Latin1_General_CP1_CI_AS', 'SQL_Latin1_General_CP1_CS_AS', 'Latin1_General_CS_AS_KS_WS',
                'Latin1_General_100_BIN2', 'Latin1_General_100_CI_AI_SC_UTF8')
 ORDER BY name;
SELECT COLLATIONPROPERTY('Klingon_CI_AS', 'CodePage') AS unknown_collation;
SELECT name FROM fn_helpcollations() WHERE COLLATIONPROPERTY(name, 'sortid') <> 0 ORDER BY name;
SELECT * FROM fn_helpcollations(1);
GO
-- Re-setting the current language keeps a SET DATEFIRST made since (tedious's login
-- batch sets DATEFIRST, then LANGUAGE us_english); a new language brings its own.
SET DATEFIRST 3;
SET LANGUAGE us_english;
SELECT @@DATEFIRST AS datefirst_kept;
SET LANGUAGE Deutsch;
SET LANGUAGE us_english;
SELECT @@DATEFIRST AS datefirst_of_us_english;
GO
