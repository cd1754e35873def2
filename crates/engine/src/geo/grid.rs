//! Elasticsearch's grids: geohash cells (base-32 strings of interleaved longitude/latitude
//! bisections) and geotiles (`zoom/x/y` Web Mercator map tiles), as its `Geohash` and
//! `GeoTileUtils` compute them, and H3's hexagons (`geohex`: cell indexes printed in hex, as
//! Elasticsearch's H3 port prints them; computed by the `h3o` crate).

use crate::geo::shape::Bounds;

const BASE32: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
pub const MAX_GEOHASH_PRECISION: u32 = 12;
pub const MAX_GEOTILE_ZOOM: u32 = 29;
pub const MAX_GEOHEX_PRECISION: u32 = 15;

/// A point's cell in one of the grids.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Grid {
    Geohash(u32),
    Geotile(u32),
    Geohex(u32),
}

/// A cell, comparable without text: a geohash's bits, or a tile's (x, y).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell(pub u64);

impl Grid {
    pub fn cell(self, lat: f64, lon: f64) -> Cell {
        match self {
            Grid::Geohash(p) => Cell(geohash_bits(lat, lon, p)),
            Grid::Geotile(z) => {
                let (x, y) = geotile(lat, lon, z);
                Cell(((x as u64) << 32) | y as u64)
            }
            Grid::Geohex(res) => {
                let cell = h3o::LatLng::new(lat, lon).ok().and_then(|p| {
                    let r = h3o::Resolution::try_from(res as u8).ok()?;
                    Some(u64::from(p.to_cell(r)))
                });
                Cell(cell.unwrap_or(0))
            }
        }
    }

    /// The cell's key as Elasticsearch prints it.
    pub fn key(self, cell: Cell) -> String {
        match self {
            Grid::Geohash(p) => (0..p)
                .map(|i| BASE32[((cell.0 >> (5 * (p - 1 - i))) & 31) as usize] as char)
                .collect(),
            Grid::Geotile(z) => format!("{z}/{}/{}", cell.0 >> 32, cell.0 & 0xffff_ffff),
            Grid::Geohex(_) => format!("{:x}", cell.0),
        }
    }

    /// An H3 cell index in hex (`811fbffffffffff`).
    pub fn parse_geohex(key: &str) -> Result<(Grid, Cell), String> {
        let cell = key
            .parse::<h3o::CellIndex>()
            .map_err(|_| format!("`{key}` is not an H3 cell index"))?;
        Ok((
            Grid::Geohex(u8::from(cell.resolution()) as u32),
            Cell(u64::from(cell)),
        ))
    }

    /// A key of this kind of grid read back: the grid (precision from the key) and the cell.
    pub fn parse_geohash(hash: &str) -> Result<(Grid, Cell), String> {
        if hash.is_empty() || hash.len() > MAX_GEOHASH_PRECISION as usize {
            return Err(format!("geohash `{hash}` must have 1 to 12 characters"));
        }
        let mut bits = 0u64;
        for c in hash.bytes() {
            let v = BASE32
                .iter()
                .position(|&b| b == c.to_ascii_lowercase())
                .ok_or_else(|| format!("`{hash}` is not a geohash"))?;
            bits = (bits << 5) | v as u64;
        }
        Ok((Grid::Geohash(hash.len() as u32), Cell(bits)))
    }

    pub fn parse_geotile(key: &str) -> Result<(Grid, Cell), String> {
        let bad = || format!("geotile `{key}` is not zoom/x/y");
        let parts: Vec<u32> = key
            .split('/')
            .map(|p| p.trim().parse::<u32>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let [z, x, y] = parts[..] else {
            return Err(bad());
        };
        if z > MAX_GEOTILE_ZOOM || x >= 1 << z || y >= 1 << z {
            return Err(format!(
                "geotile `{key}`: zoom is 0 to 29, and x and y are below 2^zoom"
            ));
        }
        Ok((Grid::Geotile(z), Cell(((x as u64) << 32) | y as u64)))
    }

    /// The cell's box.
    pub fn bounds(self, cell: Cell) -> Bounds {
        match self {
            Grid::Geohash(p) => {
                let (mut south, mut north, mut west, mut east) = (-90.0, 90.0, -180.0, 180.0);
                for i in (0..5 * p).rev() {
                    let bit = (cell.0 >> i) & 1 == 1;
                    // Bits alternate, longitude first.
                    let (lo, hi) = if (5 * p - 1 - i) % 2 == 0 {
                        (&mut west, &mut east)
                    } else {
                        (&mut south, &mut north)
                    };
                    let mid = (*lo + *hi) / 2.0;
                    if bit {
                        *lo = mid;
                    } else {
                        *hi = mid;
                    }
                }
                Bounds {
                    south,
                    north,
                    west,
                    east,
                }
            }
            Grid::Geotile(z) => {
                let tiles = (1u64 << z) as f64;
                let (x, y) = ((cell.0 >> 32) as f64, (cell.0 & 0xffff_ffff) as f64);
                let lon = |x: f64| x / tiles * 360.0 - 180.0;
                let lat = |y: f64| {
                    (std::f64::consts::PI - 2.0 * std::f64::consts::PI * y / tiles)
                        .sinh()
                        .atan()
                        .to_degrees()
                };
                Bounds {
                    south: lat(y + 1.0),
                    north: lat(y),
                    west: lon(x),
                    east: lon(x + 1.0),
                }
            }
            Grid::Geohex(_) => hex_bounds(cell),
        }
    }

    /// The cell as a shape, for a shape to intersect: a box, or an H3 cell's polygon (its
    /// vertices joined straight; across the antimeridian, drawn on both sides of it).
    pub fn cell_geometry(self, cell: Cell) -> geo::Geometry<f64> {
        let Grid::Geohex(_) = self else {
            return crate::geo::geometry::envelope_geometry(&self.bounds(cell));
        };
        let Ok(c) = h3o::CellIndex::try_from(cell.0) else {
            return geo::Geometry::GeometryCollection(geo::GeometryCollection(vec![]));
        };
        let mut ring: Vec<geo::Coord<f64>> = c
            .boundary()
            .iter()
            .map(|v| geo::Coord {
                x: v.lng(),
                y: v.lat(),
            })
            .collect();
        let (west, east) = ring
            .iter()
            .fold((f64::MAX, f64::MIN), |(w, e), c| (w.min(c.x), e.max(c.x)));
        let across = east - west > 180.0;
        if across {
            ring.iter_mut()
                .filter(|c| c.x < 0.0)
                .for_each(|c| c.x += 360.0);
        }
        ring.push(ring[0]);
        let polygon = geo::Polygon::new(geo::LineString(ring), vec![]);
        match across {
            false => geo::Geometry::Polygon(polygon),
            true => {
                use geo::Translate;
                let west_copy = polygon.translate(-360.0, 0.0);
                geo::Geometry::MultiPolygon(geo::MultiPolygon(vec![polygon, west_copy]))
            }
        }
    }
}

/// The point's geohash at `precision` characters, as bits (5 a character).
/// A box around an H3 cell, to prefilter points before their cell is computed: its vertices'
/// extent, widened by a fifth (the edges are great-circle arcs), across the antimeridian or a
/// pole where the cell is.
fn hex_bounds(cell: Cell) -> Bounds {
    let all = Bounds {
        south: -90.0,
        north: 90.0,
        west: -180.0,
        east: 180.0,
    };
    let Ok(c) = h3o::CellIndex::try_from(cell.0) else {
        return all;
    };
    let vertices: Vec<h3o::LatLng> = c.boundary().iter().copied().collect();
    let (mut south, mut north) = (90.0f64, -90.0f64);
    for v in &vertices {
        south = south.min(v.lat());
        north = north.max(v.lat());
    }
    let mut lons: Vec<f64> = vertices.iter().map(|v| v.lng()).collect();
    lons.sort_by(f64::total_cmp);
    let (west, east) = (lons[0], lons[lons.len() - 1]);
    let pad_lat = (north - south) * 0.2;
    let (south, north) = ((south - pad_lat).max(-90.0), (north + pad_lat).min(90.0));
    if south <= -89.0 || north >= 89.0 {
        return Bounds {
            south,
            north,
            ..all
        };
    }
    if east - west > 180.0 {
        // Across the antimeridian: from the easternmost negative longitude's partner.
        let west_of = lons
            .iter()
            .copied()
            .filter(|l| *l > 0.0)
            .fold(180.0, f64::min);
        let east_of = lons
            .iter()
            .copied()
            .filter(|l| *l < 0.0)
            .fold(-180.0, f64::max);
        let pad = ((east_of + 360.0) - west_of) * 0.2;
        return Bounds {
            south,
            north,
            west: west_of - pad,
            east: east_of + pad,
        };
    }
    let pad = (east - west) * 0.2;
    Bounds {
        south,
        north,
        west: (west - pad).max(-180.0),
        east: (east + pad).min(180.0),
    }
}

fn geohash_bits(lat: f64, lon: f64, precision: u32) -> u64 {
    let (mut south, mut north, mut west, mut east) = (-90.0, 90.0, -180.0, 180.0);
    let mut bits = 0u64;
    for i in 0..5 * precision {
        let (v, lo, hi) = if i % 2 == 0 {
            (lon, &mut west, &mut east)
        } else {
            (lat, &mut south, &mut north)
        };
        let mid = (*lo + *hi) / 2.0;
        bits <<= 1;
        if v >= mid {
            bits |= 1;
            *lo = mid;
        } else {
            *hi = mid;
        }
    }
    bits
}

/// `GeoTileUtils.getXTile`/`getYTile`: the tile of a point at `zoom`, clipped to the map.
fn geotile(lat: f64, lon: f64, zoom: u32) -> (u32, u32) {
    let tiles = 1u64 << zoom;
    let clip = |t: f64| (t.floor().max(0.0) as u64).min(tiles - 1) as u32;
    let x = clip((lon + 180.0) / 360.0 * tiles as f64);
    let sin = lat.to_radians().sin();
    let y = clip(
        (0.5 - ((1.0 + sin) / (1.0 - sin)).ln() / (4.0 * std::f64::consts::PI)) * tiles as f64,
    );
    (x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geohashes_as_published() {
        // The example of Wikipedia's geohash article: 57.64911, 10.40744 is u4pruydqqvj.
        let g = Grid::Geohash(11);
        assert_eq!(g.key(g.cell(57.64911, 10.40744)), "u4pruydqqvj");
        let (grid, cell) = Grid::parse_geohash("u4pruydqqvj").unwrap();
        assert_eq!(grid, g);
        let b = g.bounds(cell);
        assert!(b.contains(57.64911, 10.40744));
        assert!(b.north - b.south < 0.001);
        let (g2, c2) = Grid::parse_geohash("u0").unwrap();
        let b = g2.bounds(c2);
        assert_eq!(
            (b.west, b.east, b.south, b.north),
            (0.0, 11.25, 45.0, 50.625)
        );
        assert!(Grid::parse_geohash("u0a").is_err());
    }

    #[test]
    fn geotiles_as_web_mercator_numbers_them() {
        let g = Grid::Geotile(6);
        // Paris (48.8566, 2.3522) is tile 6/32/22 on OpenStreetMap's slippy map.
        assert_eq!(g.key(g.cell(48.8566, 2.3522)), "6/32/22");
        let (grid, cell) = Grid::parse_geotile("6/32/22").unwrap();
        assert_eq!(grid, g);
        let b = g.bounds(cell);
        assert!(b.contains(48.8566, 2.3522));
        assert_eq!((b.west, b.east), (0.0, 5.625));
        // Beyond Web Mercator's 85.05°, points fall in the edge tiles.
        assert_eq!(
            Grid::Geotile(0).key(Grid::Geotile(0).cell(89.9, 179.9)),
            "0/0/0"
        );
        assert_eq!(g.key(g.cell(-89.9, 180.0)), "6/63/63");
        assert!(Grid::parse_geotile("6/64/1").is_err());
        assert!(Grid::parse_geotile("30/0/0").is_err());
    }
}
