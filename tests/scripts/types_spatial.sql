-- geometry and geography: SQL Server's serialization ([MS-SSCLRT]) from well-known text
-- and back, the static constructors, the properties and methods, CAST, and their errors.
SELECT CAST(geometry::STGeomFromText('POINT (20 40)', 4326) AS varbinary(100)) AS point_bytes;
SELECT geometry::STGeomFromText('LINESTRING (100 100, 20 180, 180 180)', 0).STAsText() AS line,
       geography::STGeomFromText('LINESTRING(-122.360 47.656, -122.343 47.656 )', 4326).ToString() AS geo_line;
SELECT geometry::Parse('POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 3 2, 3 3, 2 2))').STAsText() AS polygon,
       geometry::Parse('POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))').STNumPoints() AS points;
SELECT geometry::Parse('MULTIPOINT ((1 2), (3 4))').STAsText() AS multipoint,
       geometry::Parse('GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1, 2 0))').STGeometryType() AS kind,
       geometry::Parse('POINT EMPTY').STIsEmpty() AS empty;
GO
DECLARE @g geometry = geometry::Point(3, 4, 0), @h geography = geography::Point(47.65, -122.35, 4326);
SELECT @g.STX AS x, @g.STY AS y, @g.STSrid AS srid, @h.Lat AS lat, @h.Long AS long, @h.STSrid AS geo_srid,
       CAST(@h.ToString() AS varchar(40)) AS geo_text;
CREATE TABLE dbo.places (id int PRIMARY KEY, shape geometry NULL, spot geography NULL, Lat float NULL);
INSERT dbo.places VALUES (1, 'POINT (1 2)', 'POINT (-122 47)', 9.5),
  (2, 0xE6100000010C00000000000034400000000000004440, NULL, NULL), (3, NULL, NULL, NULL);
SELECT id, CAST(shape.STAsText() AS varchar(30)) AS shape, p.shape.STSrid AS srid, spot.Lat AS spot_lat, p.Lat AS lat_column
FROM dbo.places p ORDER BY id;
SELECT COUNT(*) AS with_shape FROM dbo.places WHERE shape IS NOT NULL;
SELECT c.name, TYPE_NAME(c.user_type_id) AS type_name, c.max_length FROM sys.columns c
WHERE c.object_id = OBJECT_ID('dbo.places') AND c.name IN ('shape', 'spot') ORDER BY c.column_id;
SELECT name, user_type_id, system_type_id, max_length FROM sys.types WHERE name IN ('geometry', 'geography') ORDER BY name;
GO
-- Errors: a bad label, a bad number, a latitude out of range, bad bytes, conversions and
-- operators SQL Server does not have, a method of the other type.
SELECT geometry::STGeomFromText('LINESTRIN (1 1, 2 2)', 0);
GO
SELECT geometry::Parse('POINT (1 x)');
GO
SELECT geography::Point(95, 10, 4326);
GO
SELECT CAST(0x0102 AS geometry);
GO
SELECT CAST(geometry::Point(1, 2, 0) AS geography);
GO
SELECT CAST(geometry::Point(1, 2, 0) AS int);
GO
SELECT geometry::Point(1, 2, 0) + 1;
GO
DECLARE @h geography = geography::Point(1, 2, 4326);
SELECT @h.STX;
GO
-- Not comparable: no GROUP BY, ORDER BY, DISTINCT or UNION (UNION ALL compares nothing).
SELECT COUNT(*) FROM dbo.places GROUP BY shape;
GO
SELECT id FROM dbo.places ORDER BY spot;
GO
SELECT DISTINCT shape FROM dbo.places;
GO
SELECT shape FROM dbo.places UNION SELECT shape FROM dbo.places;
GO
SELECT COUNT(*) AS all_rows FROM (SELECT shape FROM dbo.places UNION ALL SELECT shape FROM dbo.places) u;
GO
