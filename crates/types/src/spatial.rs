//! geometry and geography values in SQL Server's serialization ([MS-SSCLRT] "GEOGRAPHY
//! and GEOMETRY structure", version 1): SRID (i32), version (1), properties (IsValid,
//! IsSinglePoint, IsSingleLineSegment), then a single point, a single segment's two
//! points, or the points, figures (attribute, first point) and shapes (parent, first
//! figure, OGC type). Geography points are stored latitude first. Well-known text in and
//! out (`POINT (x y)`, `LINESTRING`, `POLYGON`, the MULTI kinds, GEOMETRYCOLLECTION, EMPTY),
//! two dimensions only (no Z or M values, no curves).

use crate::error::SqlError;

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// None: POINT EMPTY.
    Point(Option<(f64, f64)>),
    LineString(Vec<(f64, f64)>),
    /// Rings: the exterior first.
    Polygon(Vec<Vec<(f64, f64)>>),
    MultiPoint(Vec<Shape>),
    MultiLineString(Vec<Shape>),
    MultiPolygon(Vec<Shape>),
    Collection(Vec<Shape>),
}

/// A geometry or geography value: its SRID and shape (points as WKT writes them: x y, or
/// longitude latitude for geography).
#[derive(Debug, Clone, PartialEq)]
pub struct Spatial {
    pub srid: i32,
    pub shape: Shape,
}

const VALID: u8 = 0x04;
const SINGLE_POINT: u8 = 0x08;
const SINGLE_SEGMENT: u8 = 0x10;

pub fn clr_error(geography: bool, exception: &str, detail: &str) -> SqlError {
    let t = if geography { "geography" } else { "geometry" };
    SqlError::new(
        6522,
        16,
        1,
        format!("A .NET Framework error occurred during execution of user-defined routine or aggregate \"{t}\": \n{exception}: {detail}"),
    )
}

fn bad_wkt(geography: bool, what: &str) -> SqlError {
    clr_error(
        geography,
        "System.FormatException",
        &format!("24114: The label {what} in the input well-known text (WKT) is not valid. Valid labels are POINT, LINESTRING, POLYGON, MULTIPOINT, MULTILINESTRING, MULTIPOLYGON, GEOMETRYCOLLECTION, CIRCULARSTRING, COMPOUNDCURVE, CURVEPOLYGON and FULLGLOBE (geography Data Type only)."),
    )
}

fn malformed(geography: bool) -> SqlError {
    clr_error(
        geography,
        "System.FormatException",
        "24141: A number is expected at this position of the input. The input has an unexpected token or is incomplete.",
    )
}

impl Shape {
    /// The OGC type number the serialization uses (1 point ... 7 collection).
    fn ogc_type(&self) -> u8 {
        match self {
            Shape::Point(_) => 1,
            Shape::LineString(_) => 2,
            Shape::Polygon(_) => 3,
            Shape::MultiPoint(_) => 4,
            Shape::MultiLineString(_) => 5,
            Shape::MultiPolygon(_) => 6,
            Shape::Collection(_) => 7,
        }
    }

    /// STGeometryType().
    pub fn type_name(&self) -> &'static str {
        match self {
            Shape::Point(_) => "Point",
            Shape::LineString(_) => "LineString",
            Shape::Polygon(_) => "Polygon",
            Shape::MultiPoint(_) => "MultiPoint",
            Shape::MultiLineString(_) => "MultiLineString",
            Shape::MultiPolygon(_) => "MultiPolygon",
            Shape::Collection(_) => "GeometryCollection",
        }
    }

    /// Every point, in order.
    pub fn points(&self) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        self.each_point(&mut |p| out.push(p));
        out
    }

    fn each_point(&self, f: &mut dyn FnMut((f64, f64))) {
        match self {
            Shape::Point(p) => p.iter().for_each(|&p| f(p)),
            Shape::LineString(ps) => ps.iter().for_each(|&p| f(p)),
            Shape::Polygon(rings) => rings.iter().flatten().for_each(|&p| f(p)),
            Shape::MultiPoint(v) | Shape::MultiLineString(v) | Shape::MultiPolygon(v) | Shape::Collection(v) => {
                v.iter().for_each(|s| s.each_point(f))
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.points().is_empty()
    }
}

// ---- well-known text -------------------------------------------------------------

struct Wkt<'a> {
    s: &'a [u8],
    at: usize,
    geography: bool,
}

impl Wkt<'_> {
    fn skip(&mut self) {
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn word(&mut self) -> String {
        self.skip();
        let start = self.at;
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_alphabetic()) {
            self.at += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.at]).to_ascii_uppercase()
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), SqlError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(malformed(self.geography))
        }
    }

    fn number(&mut self) -> Result<f64, SqlError> {
        self.skip();
        let start = self.at;
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_digit() || b"+-.eE".contains(c)) {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at])
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|v| v.is_finite())
            .ok_or_else(|| malformed(self.geography))
    }

    fn point(&mut self) -> Result<(f64, f64), SqlError> {
        let x = self.number()?;
        let y = self.number()?;
        Ok((x, y))
    }

    /// `EMPTY` or `( items )`, each item read by `item`.
    fn list<T>(&mut self, item: &mut dyn FnMut(&mut Self) -> Result<T, SqlError>) -> Result<Option<Vec<T>>, SqlError> {
        self.skip();
        let save = self.at;
        if self.word() == "EMPTY" {
            return Ok(None);
        }
        self.at = save;
        self.expect(b'(')?;
        let mut out = vec![item(self)?];
        while self.eat(b',') {
            out.push(item(self)?);
        }
        self.expect(b')')?;
        Ok(Some(out))
    }

    fn points(&mut self) -> Result<Vec<(f64, f64)>, SqlError> {
        Ok(self.list(&mut |w| w.point())?.unwrap_or_default())
    }

    fn rings(&mut self) -> Result<Vec<Vec<(f64, f64)>>, SqlError> {
        Ok(self.list(&mut |w| w.points())?.unwrap_or_default())
    }

    fn shape(&mut self) -> Result<Shape, SqlError> {
        let label = self.word();
        Ok(match label.as_str() {
            "POINT" => Shape::Point(self.list(&mut |w| w.point())?.map(|v| v[0])),
            "LINESTRING" => Shape::LineString(self.points()?),
            "POLYGON" => Shape::Polygon(self.rings()?),
            "MULTIPOINT" => Shape::MultiPoint(
                self.list(&mut |w| {
                    // Both `MULTIPOINT ((1 2), (3 4))` and `MULTIPOINT (1 2, 3 4)`.
                    if w.eat(b'(') {
                        let p = w.point()?;
                        w.expect(b')')?;
                        Ok(Shape::Point(Some(p)))
                    } else {
                        Ok(Shape::Point(Some(w.point()?)))
                    }
                })?
                .unwrap_or_default(),
            ),
            "MULTILINESTRING" => {
                Shape::MultiLineString(self.list(&mut |w| Ok(Shape::LineString(w.points()?)))?.unwrap_or_default())
            }
            "MULTIPOLYGON" => {
                Shape::MultiPolygon(self.list(&mut |w| Ok(Shape::Polygon(w.rings()?)))?.unwrap_or_default())
            }
            "GEOMETRYCOLLECTION" => Shape::Collection(self.list(&mut |w| w.shape())?.unwrap_or_default()),
            other => return Err(bad_wkt(self.geography, if other.is_empty() { "''" } else { other })),
        })
    }
}

/// SQL Server's text of a coordinate: the shortest form that reads back the same.
fn num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn pts(v: &[(f64, f64)]) -> String {
    v.iter().map(|(x, y)| format!("{} {}", num(*x), num(*y))).collect::<Vec<_>>().join(", ")
}

fn body(s: &Shape) -> String {
    let group =
        |items: Vec<String>| if items.is_empty() { "EMPTY".to_string() } else { format!("({})", items.join(", ")) };
    match s {
        Shape::Point(Some((x, y))) => format!("({} {})", num(*x), num(*y)),
        Shape::Point(None) => "EMPTY".into(),
        Shape::LineString(v) => {
            group(if v.is_empty() { vec![] } else { vec![pts(v)] }).replace("((", "(").replace("))", ")")
        }
        Shape::Polygon(r) => group(r.iter().map(|ring| format!("({})", pts(ring))).collect()),
        Shape::MultiPoint(v) => group(v.iter().map(body).collect()),
        Shape::MultiLineString(v) | Shape::MultiPolygon(v) => group(v.iter().map(body).collect()),
        Shape::Collection(v) => {
            group(v.iter().map(|s| format!("{} {}", s.type_name().to_ascii_uppercase(), body(s))).collect())
        }
    }
}

impl Spatial {
    /// STGeomFromText / Parse.
    pub fn from_wkt(text: &str, srid: i32, geography: bool) -> Result<Spatial, SqlError> {
        let mut w = Wkt { s: text.as_bytes(), at: 0, geography };
        let shape = w.shape()?;
        w.skip();
        if w.at != text.len() {
            return Err(malformed(geography));
        }
        let s = Spatial { srid, shape };
        s.check(geography)?;
        Ok(s)
    }

    fn check(&self, geography: bool) -> Result<(), SqlError> {
        if geography {
            if !(0..=999_999).contains(&self.srid) || self.srid == 0 {
                return Err(clr_error(
                    true,
                    "System.FormatException",
                    &format!("24204: The spatial reference identifier (SRID) is not valid. The specified SRID must match one of the supported SRIDs displayed in the sys.spatial_reference_systems catalog view. ({})", self.srid),
                ));
            }
            if self.shape.points().iter().any(|&(_, lat)| !(-90.0..=90.0).contains(&lat)) {
                return Err(clr_error(
                    true,
                    "System.FormatException",
                    "24201: Latitude values must be between -90 and 90 degrees.",
                ));
            }
        }
        Ok(())
    }

    /// STAsText / ToString: `LINESTRING (100 100, 20 180)`.
    pub fn to_wkt(&self) -> String {
        format!("{} {}", self.shape.type_name().to_ascii_uppercase(), body(&self.shape))
    }

    /// SQL Server's bytes.
    pub fn serialize(&self, geography: bool) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.srid.to_le_bytes());
        out.push(1);
        let put = |out: &mut Vec<u8>, (x, y): (f64, f64)| {
            let (a, b) = if geography { (y, x) } else { (x, y) };
            out.extend_from_slice(&a.to_le_bytes());
            out.extend_from_slice(&b.to_le_bytes());
        };
        match &self.shape {
            Shape::Point(Some(p)) => {
                out.push(VALID | SINGLE_POINT);
                put(&mut out, *p);
                return out;
            }
            Shape::LineString(v) if v.len() == 2 => {
                out.push(VALID | SINGLE_SEGMENT);
                put(&mut out, v[0]);
                put(&mut out, v[1]);
                return out;
            }
            _ => out.push(VALID),
        }
        let mut points = Vec::new();
        let mut figures: Vec<(u8, i32)> = Vec::new();
        let mut shapes: Vec<(i32, i32, u8)> = Vec::new();
        fn walk(
            s: &Shape,
            parent: i32,
            points: &mut Vec<(f64, f64)>,
            figures: &mut Vec<(u8, i32)>,
            shapes: &mut Vec<(i32, i32, u8)>,
        ) {
            let me = shapes.len() as i32;
            let first_figure = if s.is_empty() { -1 } else { figures.len() as i32 };
            shapes.push((parent, first_figure, s.ogc_type()));
            let mut figure = |attr: u8, ps: &[(f64, f64)], points: &mut Vec<(f64, f64)>| {
                figures.push((attr, points.len() as i32));
                points.extend_from_slice(ps);
            };
            match s {
                Shape::Point(Some(p)) => figure(1, &[*p], points),
                Shape::Point(None) => {}
                Shape::LineString(v) if !v.is_empty() => figure(1, v, points),
                Shape::LineString(_) => {}
                Shape::Polygon(rings) => {
                    for (i, r) in rings.iter().enumerate() {
                        figure(if i == 0 { 2 } else { 0 }, r, points);
                    }
                }
                Shape::MultiPoint(v) | Shape::MultiLineString(v) | Shape::MultiPolygon(v) | Shape::Collection(v) => {
                    for c in v {
                        walk(c, me, points, figures, shapes);
                    }
                }
            }
        }
        walk(&self.shape, -1, &mut points, &mut figures, &mut shapes);
        out.extend_from_slice(&(points.len() as u32).to_le_bytes());
        for p in &points {
            put(&mut out, *p);
        }
        out.extend_from_slice(&(figures.len() as u32).to_le_bytes());
        for (attr, offset) in &figures {
            out.push(*attr);
            out.extend_from_slice(&offset.to_le_bytes());
        }
        out.extend_from_slice(&(shapes.len() as u32).to_le_bytes());
        for (parent, figure, kind) in &shapes {
            out.extend_from_slice(&parent.to_le_bytes());
            out.extend_from_slice(&figure.to_le_bytes());
            out.push(*kind);
        }
        out
    }

    /// Reads SQL Server's bytes; None when they are not a valid version 1 or 2
    /// serialization of a two-dimensional value.
    pub fn deserialize(b: &[u8], geography: bool) -> Option<Spatial> {
        let mut r = Bytes { b, at: 0 };
        let srid = i32::from_le_bytes(r.take(4)?.try_into().ok()?);
        let version = r.u8()?;
        let props = r.u8()?;
        if !(1..=2).contains(&version) || props & 0x03 != 0 {
            return None;
        }
        let point = |r: &mut Bytes| -> Option<(f64, f64)> {
            let a = f64::from_le_bytes(r.take(8)?.try_into().ok()?);
            let c = f64::from_le_bytes(r.take(8)?.try_into().ok()?);
            Some(if geography { (c, a) } else { (a, c) })
        };
        let shape = if props & SINGLE_POINT != 0 {
            Shape::Point(Some(point(&mut r)?))
        } else if props & SINGLE_SEGMENT != 0 {
            Shape::LineString(vec![point(&mut r)?, point(&mut r)?])
        } else {
            let n = r.u32()? as usize;
            let mut points = Vec::with_capacity(n.min(1 << 16));
            for _ in 0..n {
                points.push(point(&mut r)?);
            }
            let nf = r.u32()? as usize;
            let mut figures = Vec::with_capacity(nf.min(1 << 16));
            for _ in 0..nf {
                let attr = r.u8()?;
                let off = r.i32()?;
                figures.push((attr, usize::try_from(off).ok().filter(|&o| o <= n)?));
            }
            let ns = r.u32()? as usize;
            let mut shapes = Vec::with_capacity(ns.min(1 << 16));
            for _ in 0..ns {
                let parent = r.i32()?;
                let figure = r.i32()?;
                let kind = r.u8()?;
                shapes.push((parent, figure, kind));
            }
            build(0, &shapes, &figures, &points)?
        };
        if r.at != b.len() {
            return None;
        }
        Some(Spatial { srid, shape })
    }
}

/// The shape at `i` of the shape table, with its children.
fn build(i: usize, shapes: &[(i32, i32, u8)], figures: &[(u8, usize)], points: &[(f64, f64)]) -> Option<Shape> {
    let (_, first, kind) = *shapes.get(i)?;
    // A leaf's figures run to the next shape's first figure (or the end).
    let figure_range = || -> Option<std::ops::Range<usize>> {
        let start = usize::try_from(first).ok()?;
        let end = shapes[i + 1..].iter().find_map(|&(_, f, _)| usize::try_from(f).ok()).unwrap_or(figures.len());
        (start <= end && end <= figures.len()).then_some(start..end)
    };
    let figure_points = |f: usize| -> Option<Vec<(f64, f64)>> {
        let start = figures.get(f)?.1;
        let end = figures.get(f + 1).map_or(points.len(), |x| x.1);
        points.get(start..end).map(<[_]>::to_vec)
    };
    let children = || -> Option<Vec<Shape>> {
        shapes
            .iter()
            .enumerate()
            .filter(|(_, s)| s.0 == i as i32)
            .map(|(j, _)| build(j, shapes, figures, points))
            .collect()
    };
    Some(match kind {
        1 => Shape::Point(if first < 0 { None } else { figure_points(figure_range()?.start)?.first().copied() }),
        2 => Shape::LineString(if first < 0 { Vec::new() } else { figure_points(figure_range()?.start)? }),
        3 => Shape::Polygon(if first < 0 {
            Vec::new()
        } else {
            figure_range()?.map(figure_points).collect::<Option<Vec<_>>>()?
        }),
        4 => Shape::MultiPoint(children()?),
        5 => Shape::MultiLineString(children()?),
        6 => Shape::MultiPolygon(children()?),
        7 => Shape::Collection(children()?),
        _ => return None,
    })
}

struct Bytes<'a> {
    b: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i32(&mut self) -> Option<i32> {
        self.u32().map(|v| v as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_sql_servers_bytes() {
        // go-mssqldb's bulk copy test value: POINT (20 40), SRID 4326.
        let p = Spatial::from_wkt("POINT (20 40)", 4326, false).unwrap();
        let hex: String = p.serialize(false).iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(hex, "E6100000010C00000000000034400000000000004440");
        assert_eq!(Spatial::deserialize(&p.serialize(false), false).unwrap(), p);
    }

    #[test]
    fn shapes_round_trip_through_text_and_bytes() {
        for (text, geography) in [
            ("LINESTRING (100 100, 20 180, 180 180)", false),
            ("LINESTRING (-122.36 47.656, -122.343 47.656)", true),
            ("POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 3 2, 3 3, 2 2))", false),
            ("MULTIPOINT ((1 2), (3 4))", false),
            ("MULTILINESTRING ((0 0, 1 1), (2 2, 3 3, 4 4))", false),
            ("MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))", false),
            ("GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1, 2 0))", false),
            ("POINT EMPTY", false),
            ("LINESTRING EMPTY", false),
            ("GEOMETRYCOLLECTION EMPTY", false),
            ("POINT (1.5 -2.25)", true),
        ] {
            let s = Spatial::from_wkt(text, 4326, geography).unwrap();
            assert_eq!(s.to_wkt(), text);
            let back = Spatial::deserialize(&s.serialize(geography), geography).unwrap();
            assert_eq!(back, s, "{text}");
        }
    }

    #[test]
    fn bad_input_is_rejected() {
        assert!(Spatial::from_wkt("LINESTRIN (1 1, 2 2)", 0, false).is_err());
        assert!(Spatial::from_wkt("POINT (1)", 0, false).is_err());
        assert!(Spatial::from_wkt("POINT (1 2) x", 0, false).is_err());
        assert!(Spatial::from_wkt("POINT (1 95)", 4326, true).is_err());
        assert!(Spatial::deserialize(&[0xE6, 0x10, 0, 0, 1], false).is_none());
        assert!(Spatial::deserialize(&[0xE6, 0x10, 0, 0, 1, 0x0C, 1, 2], false).is_none());
    }
}
