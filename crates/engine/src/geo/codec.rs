//! A geo_shape value as its column keeps it: a tag per geometry, counts as little-endian
//! u32, coordinates as little-endian f64 (lon, lat). Read back with every length checked, so
//! a damaged value is an error, never a panic.

use geo::{
    Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint, MultiPolygon,
    Point, Polygon,
};

const POINT: u8 = 1;
const LINE: u8 = 2;
const POLYGON: u8 = 3;
const MULTI_POINT: u8 = 4;
const MULTI_LINE: u8 = 5;
const MULTI_POLYGON: u8 = 6;
const COLLECTION: u8 = 7;

pub fn encode(g: &Geometry<f64>) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, g);
    out
}

fn put_count(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

fn put_coords(out: &mut Vec<u8>, l: &LineString<f64>) {
    put_count(out, l.0.len());
    for c in &l.0 {
        out.extend_from_slice(&c.x.to_le_bytes());
        out.extend_from_slice(&c.y.to_le_bytes());
    }
}

fn put_polygon(out: &mut Vec<u8>, p: &Polygon<f64>) {
    put_count(out, 1 + p.interiors().len());
    put_coords(out, p.exterior());
    for r in p.interiors() {
        put_coords(out, r);
    }
}

fn put(out: &mut Vec<u8>, g: &Geometry<f64>) {
    match g {
        Geometry::Point(p) => {
            out.push(POINT);
            out.extend_from_slice(&p.x().to_le_bytes());
            out.extend_from_slice(&p.y().to_le_bytes());
        }
        Geometry::LineString(l) => {
            out.push(LINE);
            put_coords(out, l);
        }
        Geometry::Polygon(p) => {
            out.push(POLYGON);
            put_polygon(out, p);
        }
        Geometry::MultiPoint(m) => {
            out.push(MULTI_POINT);
            put_coords(out, &LineString(m.0.iter().map(|p| p.0).collect()));
        }
        Geometry::MultiLineString(m) => {
            out.push(MULTI_LINE);
            put_count(out, m.0.len());
            m.0.iter().for_each(|l| put_coords(out, l));
        }
        Geometry::MultiPolygon(m) => {
            out.push(MULTI_POLYGON);
            put_count(out, m.0.len());
            m.0.iter().for_each(|p| put_polygon(out, p));
        }
        Geometry::GeometryCollection(c) => {
            out.push(COLLECTION);
            put_count(out, c.0.len());
            c.0.iter().for_each(|g| put(out, g));
        }
        // The parser makes none of these: a box is a polygon, a triangle or a line is not
        // read from GeoJSON or WKT.
        Geometry::Rect(r) => put(out, &Geometry::Polygon(r.to_polygon())),
        Geometry::Triangle(t) => put(out, &Geometry::Polygon(t.to_polygon())),
        Geometry::Line(l) => put(out, &Geometry::LineString(LineString(vec![l.start, l.end]))),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        if self.bytes.len() < n {
            return Err("a stored shape ends early".into());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn count(&mut self, each: usize) -> Result<usize, String> {
        let b = self.take(4)?;
        let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        // Every item takes at least `each` bytes: a count the bytes cannot hold is damage.
        if n.saturating_mul(each) > self.bytes.len() {
            return Err("a stored shape counts more than it holds".into());
        }
        Ok(n)
    }
    fn f64(&mut self) -> Result<f64, String> {
        let b = self.take(8)?;
        Ok(f64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    fn coord(&mut self) -> Result<Coord<f64>, String> {
        Ok(Coord {
            x: self.f64()?,
            y: self.f64()?,
        })
    }
    fn line(&mut self) -> Result<LineString<f64>, String> {
        let n = self.count(16)?;
        (0..n)
            .map(|_| self.coord())
            .collect::<Result<_, _>>()
            .map(LineString)
    }
    fn polygon(&mut self) -> Result<Polygon<f64>, String> {
        let n = self.count(4)?;
        let outer = self.line()?;
        let holes = (1..n).map(|_| self.line()).collect::<Result<_, _>>()?;
        Ok(Polygon::new(outer, holes))
    }
    fn geometry(&mut self) -> Result<Geometry<f64>, String> {
        Ok(match self.u8()? {
            POINT => Geometry::Point(Point(self.coord()?)),
            LINE => Geometry::LineString(self.line()?),
            POLYGON => Geometry::Polygon(self.polygon()?),
            MULTI_POINT => {
                Geometry::MultiPoint(MultiPoint(self.line()?.0.into_iter().map(Point).collect()))
            }
            MULTI_LINE => {
                let n = self.count(4)?;
                Geometry::MultiLineString(MultiLineString(
                    (0..n).map(|_| self.line()).collect::<Result<_, _>>()?,
                ))
            }
            MULTI_POLYGON => {
                let n = self.count(8)?;
                Geometry::MultiPolygon(MultiPolygon(
                    (0..n).map(|_| self.polygon()).collect::<Result<_, _>>()?,
                ))
            }
            COLLECTION => {
                let n = self.count(1)?;
                Geometry::GeometryCollection(GeometryCollection(
                    (0..n).map(|_| self.geometry()).collect::<Result<_, _>>()?,
                ))
            }
            other => return Err(format!("a stored shape has an unknown tag {other}")),
        })
    }
}

pub fn decode(bytes: &[u8]) -> Result<Geometry<f64>, String> {
    let mut r = Reader { bytes };
    let g = r.geometry()?;
    if !r.bytes.is_empty() {
        return Err("a stored shape has bytes past its end".into());
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geo::geometry::Parsed;
    use serde_json::json;

    #[test]
    fn every_kind_reads_back_and_damage_is_an_error() {
        for wkt in [
            "POINT (1 2)",
            "LINESTRING (0 0, 1 1, 2 0)",
            "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (4 4, 6 4, 6 6, 4 6, 4 4))",
            "MULTIPOINT ((1 2), (3 4))",
            "MULTILINESTRING ((0 0, 1 1), (2 2, 3 3))",
            "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))",
            "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))",
        ] {
            let Parsed::Geometry(g) = Parsed::parse(&json!(wkt)).unwrap() else {
                panic!("{wkt} is a geometry")
            };
            let bytes = encode(&g);
            assert_eq!(decode(&bytes).unwrap(), g, "{wkt}");
            for cut in 0..bytes.len() {
                assert!(decode(&bytes[..cut]).is_err(), "{wkt} cut at {cut}");
            }
        }
        assert!(decode(&[LINE, 255, 255, 255, 255]).is_err());
    }
}
