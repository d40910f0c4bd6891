-- The xml data type's methods: value(), query(), exist() and nodes() over Extended
-- Events-style documents, as DBA scripts shred them.
SET NOCOUNT ON;
GO
-- CAST stores the normalized form: double-quoted attributes, <a />, no insignificant
-- whitespace, no XML declaration, entities and CDATA resolved.
SELECT CAST('<?xml version="1.0"?>
<a  b=''1''>
  <c></c><d>x &amp; y<![CDATA[<z>]]></d><!--note-->
</a>' AS xml) AS normalized;
GO
CREATE TABLE #xml (ev varchar(5), ed xml);
INSERT #xml VALUES
 ('begin', '<event name="checkpoint_begin" package="sqlserver" timestamp="2020-01-20T00:19:04.167Z"><data name="database_id"><value>19</value></data><action name="attach_activity_id" package="package0"><value>3A340E12-4103-4E37-A564-4CBC0D6E3F44-57</value></action></event>'),
 ('end', '<event name="checkpoint_end" package="sqlserver" timestamp="2020-01-20T00:19:33.644Z"><data name="database_id"><value>19</value></data><action name="attach_activity_id" package="package0"><value>3A340E12-4103-4E37-A564-4CBC0D6E3F44-58</value></action></event>'),
 ('begin', '<event name="checkpoint_begin" package="sqlserver" timestamp="2020-01-20T00:20:00.000Z"><data name="database_id"><value>7</value></data></event>'),
 ('end', '<event name="checkpoint_end" package="sqlserver" timestamp="2020-01-20T00:20:02.500Z"><data name="database_id"><value>7</value></data></event>');
GO
-- Seed 000's shape: typed values once, begin/end paired with LAG.
;WITH Events(ev, ts, db) AS
(
  SELECT ev,
    ed.value(N'(event/@timestamp)[1]', N'datetime'),
    ed.value(N'(event/data[@name="database_id"]/value)[1]', N'int')
  FROM #xml
),
EventPairs AS
(
  SELECT db, ev, checkpoint_ended = ts,
    checkpoint_began = LAG(ts, 1) OVER (PARTITION BY db ORDER BY ts)
  FROM Events
)
SELECT db, checkpoint_began, checkpoint_ended,
  duration_ms = DATEDIFF(MILLISECOND, checkpoint_began, checkpoint_ended)
FROM EventPairs WHERE ev = 'end' AND checkpoint_began IS NOT NULL
ORDER BY db;
GO
-- A ring-buffer style document shredded with CROSS APPLY nodes().
DECLARE @target xml = N'<RingBufferTarget eventCount="3">
  <event name="sql_batch_completed" timestamp="2024-05-01T10:00:00.123Z">
    <data name="duration"><value>1500</value></data>
    <data name="batch_text"><value>SELECT 1</value></data>
  </event>
  <event name="sql_batch_completed" timestamp="2024-05-01T10:00:01.000Z">
    <data name="duration"><value>250000</value></data>
    <data name="batch_text"><value><![CDATA[SELECT * FROM t WHERE a < 5]]></value></data>
  </event>
  <event name="error_reported" timestamp="2024-05-01T10:00:02.000Z">
    <data name="error_number"><value>8134</value></data>
  </event>
</RingBufferTarget>';
SELECT
  n.c.value('@name', 'nvarchar(60)') AS event_name,
  n.c.value('@timestamp', 'datetime2(3)') AS ts,
  n.c.value('(data[@name="duration"]/value)[1]', 'bigint') AS duration,
  n.c.value('(data[@name="batch_text"]/value)[1]', 'nvarchar(max)') AS batch_text,
  n.c.value('../@eventCount', 'int') AS total,
  n.c.exist('data[@name="error_number"]') AS is_error
FROM @target.nodes('/RingBufferTarget/event') AS n(c);
SELECT COUNT(*) AS slow FROM @target.nodes('//event[data[@name="duration"]/value > 100000]') AS n(c);
DECLARE @name nvarchar(60) = N'error_reported';
SELECT n.c.value('(data/value)[1]', 'int') AS err
FROM @target.nodes('/RingBufferTarget/event[@name=sql:variable("@name")]') AS n(c);
SELECT @target.value('count(/RingBufferTarget/event)', 'int') AS events,
  @target.value('local-name(/*[1])', 'sysname') AS root,
  @target.value('string((//data/@name)[2])', 'varchar(20)') AS second_data;
GO
-- query() and exist() on a table column; CROSS APPLY over each row's document.
SELECT ev, ed.query('event/data') AS data, ed.exist('event/action') AS has_action
FROM #xml ORDER BY ed.value('(event/@timestamp)[1]', 'datetime2');
SELECT x.ev, d.c.value('.', 'int') AS db
FROM #xml AS x CROSS APPLY x.ed.nodes('event/data/value') AS d(c)
ORDER BY db, x.ev;
SELECT x.ev, a.c.value('.', 'varchar(50)') AS activity
FROM #xml AS x OUTER APPLY x.ed.nodes('event/action/value') AS a(c)
ORDER BY x.ev, activity;
SELECT CAST('<a><b>1</b><b>2</b></a>' AS xml).query('/a/b[2]') AS second,
  CAST('<a><b>1</b><b>2</b></a>' AS xml).value('(/a/c)[1]', 'int') AS missing;
GO
-- Text stored into an xml column is normalized too; a bad document is rejected.
INSERT #xml VALUES ('other', '<event  name=''x''>
  <data/>
</event>');
SELECT ed FROM #xml WHERE ev = 'other';
INSERT #xml VALUES ('bad', '<event>');
SELECT COUNT(*) AS rows_now FROM #xml;
DELETE #xml WHERE ev = 'other';
GO
DECLARE @x xml = NULL;
SELECT @x.value('(/a)[1]', 'int') AS null_value, @x.exist('/a') AS null_exist;
GO
-- Errors: value() needs a singleton, bad XML, a bad XQuery, methods on non-xml.
SELECT ed.value('event/@timestamp', 'datetime') FROM #xml;
GO
DECLARE @bad xml = '<a><b></a>';
GO
DECLARE @bad xml = '<a>';
GO
DECLARE @x xml = '<a/>';
SELECT @x.value('(/a[)[1]', 'int');
GO
DECLARE @x xml = '<a/>';
SELECT @x.value('(/a)[1]', 'xml');
GO
DECLARE @s varchar(10) = '<a/>';
SELECT @s.value('(/a)[1]', 'int');
GO
DROP TABLE #xml;
