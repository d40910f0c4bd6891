-- The double-byte code pages (docs/architecture.md, "Collations"): 932 (Japanese_*), 936
-- (Chinese_PRC_*), 949 (Korean_Wansung_*, Korean_90/100_*) and 950
-- (Chinese_Taiwan_Stroke_*, Chinese_Hong_Kong_Stroke_90_*). Text cast
-- to varchar under those collations keeps its characters; one the code page lacks
-- becomes '?'; char and varchar lengths count bytes (two per ideograph, one per ASCII
-- letter and per half-width katakana), so varchar(4) takes two ideographs and a cast
-- cuts before a character that would not fit whole; LEN counts characters.
SELECT CAST(CAST(N'你好' AS nvarchar(max)) COLLATE Chinese_PRC_CI_AI AS varchar(max)) AS zh,
       DATALENGTH(CAST(N'你好' COLLATE Chinese_PRC_CI_AI AS varchar(10))) AS zh_bytes,
       DATALENGTH(CAST(N'ab你' COLLATE Chinese_PRC_CI_AI AS varchar(10))) AS mixed_bytes;
SELECT CAST(N'日本語ｶﾀｶﾅ' COLLATE Japanese_CI_AS AS varchar(20)) AS ja,
       DATALENGTH(CAST(N'日本語ｶﾀｶﾅ' COLLATE Japanese_CI_AS AS varchar(20))) AS ja_bytes,
       CAST(N'한국어' COLLATE Korean_Wansung_CI_AS AS varchar(20)) AS ko,
       CAST(N'繁體中文' COLLATE Chinese_Taiwan_Stroke_CI_AS AS varchar(20)) AS tw;
SELECT CAST(N'한국어' COLLATE Chinese_PRC_CI_AS AS varchar(20)) AS not_in_936,
       CAST(N'中文字' COLLATE Chinese_PRC_CI_AS AS varchar(5)) AS cut_at_5,
       CAST(CAST(N'中文字' COLLATE Chinese_PRC_CI_AS AS varchar(5)) AS varbinary(10)) AS cut_bytes;
SELECT CAST(CAST(N'안녕하세요.' AS nvarchar(max)) COLLATE Korean_90_CI_AI AS varchar(max)) AS ko_90,
       CAST(N'你好' COLLATE Chinese_Hong_Kong_Stroke_90_CI_AI AS varchar(10)) AS hk_90;
SELECT name, description FROM sys.fn_helpcollations()
 WHERE name IN ('Korean_90_CI_AI', 'Korean_Wansung_CI_AS', 'Japanese_90_BIN2', 'Chinese_PRC_CS_AS_KS_WS') ORDER BY name;
SELECT COLLATIONPROPERTY('Chinese_PRC_CI_AI', 'CodePage') AS prc_cp, COLLATIONPROPERTY('Japanese_CI_AS', 'LCID') AS ja_lcid,
       COLLATIONPROPERTY('Korean_Wansung_CS_AS', 'CodePage') AS ko_cp, COLLATIONPROPERTY('Chinese_Taiwan_Stroke_100_CI_AI', 'LCID') AS tw_lcid;
GO
CREATE TABLE dbo.z (id int PRIMARY KEY, v varchar(4) COLLATE Chinese_PRC_CI_AS, f char(6) COLLATE Chinese_PRC_CI_AS);
INSERT dbo.z VALUES (1, N'中文', N'中');
INSERT dbo.z VALUES (2, N'中文字', N'a');
INSERT dbo.z VALUES (3, N'ab中', N'abcdef');
SELECT id, v, LEN(v) AS len_v, DATALENGTH(v) AS bytes_v, DATALENGTH(f) AS bytes_f FROM dbo.z ORDER BY id;
SELECT id FROM dbo.z WHERE v = N'中文';
DROP TABLE dbo.z;
GO
