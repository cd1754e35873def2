//! Built-in document generators: synthetic corpora a track declares with `generate:` instead of
//! a file, so that a bulk benchmark can index millions of documents with no file of that size.
//! Document `n` depends only on the seed and `n`, so every run (and every backend) indexes the
//! same bytes, and generation is cheap enough (no formatting machinery, no allocation) that the
//! feeder thread stays far ahead of the clients.

use crate::units::decimal;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dataset {
    /// ~126-byte documents: a timestamp, an id, a short title, two numbers and two tags.
    Small,
    /// ~2.5 KB HTTP access-log events in ECS shape (source, url, user agent, host, cloud...).
    Httplog,
}

impl Dataset {
    pub const NAMES: [&'static str; 2] = ["small", "httplog"];

    pub fn parse(name: &str) -> Option<Dataset> {
        match name {
            "small" => Some(Dataset::Small),
            "httplog" => Some(Dataset::Httplog),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dataset::Small => "small",
            Dataset::Httplog => "httplog",
        }
    }

    /// Appends document `n` as one JSON line (with its newline) to `buf`.
    pub fn write(self, seed: u64, n: u64, buf: &mut String) {
        let mut w = Writer {
            buf,
            rng: Mix::new(seed, n),
        };
        match self {
            Dataset::Small => small(&mut w, n),
            Dataset::Httplog => httplog(&mut w, n),
        }
        w.buf.push('\n');
    }
}

/// SplitMix64 seeded from (seed, n): a few arithmetic steps per value, and no state shared
/// between documents, so document `n` can be made without making the ones before it.
struct Mix(u64);

impl Mix {
    fn new(seed: u64, n: u64) -> Mix {
        let mut m = Mix(seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        m.next();
        m
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

struct Writer<'a> {
    buf: &'a mut String,
    rng: Mix,
}

impl Writer<'_> {
    fn s(&mut self, text: &str) {
        self.buf.push_str(text);
    }

    fn num(&mut self, n: u64) {
        let mut digits = [0u8; 20];
        self.buf.push_str(decimal(&mut digits, n));
    }

    /// `n` left-padded with zeros to `width` digits.
    fn padded(&mut self, n: u64, width: usize) {
        let mut digits = [0u8; 20];
        let text = decimal(&mut digits, n);
        for _ in text.len()..width {
            self.buf.push('0');
        }
        self.buf.push_str(text);
    }

    fn hex(&mut self, mut value: u64, width: usize) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 16];
        for slot in out[..width].iter_mut().rev() {
            *slot = HEX[(value & 15) as usize];
            value >>= 4;
        }
        self.buf
            .push_str(std::str::from_utf8(&out[..width]).unwrap_or_default());
    }

    fn pick(&mut self, items: &[&str]) {
        let item = self.rng.pick(items);
        self.buf.push_str(item);
    }

    fn ipv4(&mut self) {
        let v = self.rng.next();
        for i in 0..4 {
            if i > 0 {
                self.buf.push('.');
            }
            self.num(((v >> (i * 8)) & 0xff).max(1));
        }
    }

    /// `2026-01-01T00:00:00.000Z`-style UTC time for a millisecond epoch timestamp.
    fn timestamp(&mut self, epoch_ms: u64) {
        let secs = epoch_ms / 1000;
        let (y, m, d) = civil_from_days((secs / 86_400) as i64);
        let day_secs = secs % 86_400;
        self.num(y as u64);
        self.s("-");
        self.padded(m as u64, 2);
        self.s("-");
        self.padded(d as u64, 2);
        self.s("T");
        self.padded(day_secs / 3600, 2);
        self.s(":");
        self.padded(day_secs / 60 % 60, 2);
        self.s(":");
        self.padded(day_secs % 60, 2);
        self.s(".");
        self.padded(epoch_ms % 1000, 3);
        self.s("Z");
    }
}

/// Days since 1970-01-01 to (year, month, day), Howard Hinnant's `civil_from_days`.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// 2026-01-01T00:00:00Z: generated events start here and move forward.
const EPOCH_MS: u64 = 1_767_225_600_000;

const WORDS: [&str; 16] = [
    "alpha", "bravo", "delta", "quick", "brown", "river", "stone", "cloud", "amber", "north",
    "lunar", "cedar", "pixel", "orbit", "ember", "maple",
];
const TAGS: [&str; 8] = [
    "red", "green", "blue", "gold", "teal", "plum", "rust", "jade",
];

fn small(w: &mut Writer, n: u64) {
    w.s("{\"@timestamp\":\"");
    w.timestamp(EPOCH_MS + n * 1000);
    w.s("\",\"id\":");
    w.num(n + 1);
    w.s(",\"title\":\"");
    for i in 0..3 {
        if i > 0 {
            w.s(" ");
        }
        w.pick(&WORDS);
    }
    w.s("\",\"value\":");
    let v = w.rng.below(100_000);
    w.num(v);
    w.s(",\"group\":");
    let g = w.rng.below(100);
    w.num(g);
    w.s(",\"tags\":[\"");
    w.pick(&TAGS);
    w.s("\",\"");
    w.pick(&TAGS);
    w.s("\"]}");
}

const METHODS: [&str; 8] = ["GET", "GET", "GET", "GET", "GET", "POST", "PUT", "DELETE"];
const STATUS: [&str; 10] = [
    "200", "200", "200", "200", "200", "200", "304", "301", "404", "503",
];
const PATHS: [&str; 8] = [
    "/api/v1/orders",
    "/api/v1/customers/search",
    "/static/css/site.min.css",
    "/static/js/app.bundle.js",
    "/images/products/thumbnail.jpg",
    "/checkout/cart",
    "/login",
    "/healthz",
];
const AGENTS: [(&str, &str, &str, &str, &str); 4] = [
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.109 Safari/537.36", "Chrome", "120.0.6099.109", "Windows", "10"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15", "Safari", "17.2", "Mac OS X", "14.2.1"),
    ("Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0", "Firefox", "121.0", "Linux", "6.5"),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1", "Mobile Safari", "17.2", "iOS", "17.2"),
];
const GEO: [(&str, &str, &str, &str, &str, &str); 6] = [
    (
        "Europe",
        "DE",
        "Germany",
        "Bavaria",
        "Munich",
        "48.1374,\"lon\":11.5755",
    ),
    (
        "Europe",
        "AT",
        "Austria",
        "Carinthia",
        "Sankt Georgen",
        "46.6281,\"lon\":14.3152",
    ),
    (
        "North America",
        "US",
        "United States",
        "California",
        "San Jose",
        "37.3394,\"lon\":-121.895",
    ),
    (
        "Asia",
        "JP",
        "Japan",
        "Tokyo",
        "Tokyo",
        "35.6895,\"lon\":139.6917",
    ),
    (
        "South America",
        "BR",
        "Brazil",
        "Sao Paulo",
        "Sao Paulo",
        "-23.5475,\"lon\":-46.6361",
    ),
    (
        "Oceania",
        "AU",
        "Australia",
        "New South Wales",
        "Sydney",
        "-33.8678,\"lon\":151.2073",
    ),
];
const REGIONS: [&str; 4] = ["eu-central-1", "us-west-2", "ap-northeast-1", "sa-east-1"];
const ORGS: [&str; 4] = [
    "Deutsche Telekom AG",
    "Comcast Cable Communications, LLC",
    "NTT Communications Corporation",
    "Telstra Corporation Ltd",
];

/// An ECS-shaped HTTP access-log event. The random draws come in a fixed order (the ones
/// fixed here first, then those the sections make), so document N depends on seed and N only.
fn httplog(w: &mut Writer, n: u64) {
    let ts = EPOCH_MS + n * 10 + w.rng.below(10);
    let method_status = w.rng.next();
    let method = METHODS[(method_status % 8) as usize];
    let status = STATUS[(method_status >> 8) as usize % 10];
    let path = w.rng.pick(&PATHS);
    let (agent, browser, browser_version, os, os_version) = AGENTS[w.rng.below(4) as usize];
    let (continent, iso, country, region, city, location) = GEO[w.rng.below(6) as usize];
    let bytes = 200 + w.rng.below(50_000);
    let request_bytes = if method == "GET" {
        0
    } else {
        100 + w.rng.below(4000)
    };
    let host = w.rng.below(16);
    let trace = w.rng.next();
    let duration_us = 200 + w.rng.below(2_000_000);

    let e = Event {
        ts,
        method,
        status,
        path,
        agent,
        browser,
        browser_version,
        os,
        os_version,
        continent,
        iso,
        country,
        region,
        city,
        location,
        bytes,
        request_bytes,
        host,
        trace,
        duration_us,
    };
    message_and_event(w, &e, n);
    http_and_url(w, &e, n);
    user_agent_and_source(w, &e);
    host_and_cloud(w, &e, n);
}

/// What one access-log event is made of, drawn before it is written.
struct Event {
    ts: u64,
    method: &'static str,
    status: &'static str,
    path: &'static str,
    agent: &'static str,
    browser: &'static str,
    browser_version: &'static str,
    os: &'static str,
    os_version: &'static str,
    continent: &'static str,
    iso: &'static str,
    country: &'static str,
    region: &'static str,
    city: &'static str,
    location: &'static str,
    bytes: u64,
    request_bytes: u64,
    host: u64,
    trace: u64,
    duration_us: u64,
}

/// `@timestamp`, the access-log line and the ECS `event`.
fn message_and_event(w: &mut Writer, e: &Event, n: u64) {
    w.s("{\"@timestamp\":\"");
    w.timestamp(e.ts);
    w.s("\",\"message\":\"");
    w.ipv4();
    w.s(" - - [");
    w.timestamp(e.ts);
    w.s("] \\\"");
    w.s(e.method);
    w.s(" ");
    w.s(e.path);
    w.s("?page=");
    w.num(n % 50);
    w.s(" HTTP/1.1\\\" ");
    w.s(e.status);
    w.s(" ");
    w.num(e.bytes);
    w.s(" \\\"https://shop.example.com/\\\" \\\"");
    w.s(e.agent);
    w.s("\\\"\",\"event\":{\"kind\":\"event\",\"category\":[\"web\"],\"type\":[\"access\"],\"dataset\":\"nginx.access\",\"module\":\"nginx\",\"outcome\":\"");
    w.s(if e.status.starts_with('5') || e.status == "404" {
        "failure"
    } else {
        "success"
    });
    w.s("\",\"duration\":");
    w.num(e.duration_us * 1000);
    w.s(",\"created\":\"");
    w.timestamp(e.ts + 3);
    w.s("\",\"ingested\":\"");
    w.timestamp(e.ts + 250);
}

/// `http` and `url`.
fn http_and_url(w: &mut Writer, e: &Event, n: u64) {
    w.s("\"},\"http\":{\"version\":\"1.1\",\"request\":{\"id\":\"");
    w.hex(e.trace, 16);
    w.s("\",\"method\":\"");
    w.s(e.method);
    w.s("\",\"bytes\":");
    w.num(e.request_bytes);
    w.s(",\"referrer\":\"https://shop.example.com/\",\"mime_type\":\"application/json\"},\"response\":{\"status_code\":");
    w.s(e.status);
    w.s(",\"bytes\":");
    w.num(e.bytes);
    w.s(",\"mime_type\":\"text/html; charset=utf-8\"}},\"url\":{\"original\":\"");
    w.s(e.path);
    w.s("?page=");
    w.num(n % 50);
    w.s("\",\"scheme\":\"https\",\"domain\":\"shop.example.com\",\"port\":443,\"path\":\"");
    w.s(e.path);
    w.s("\",\"query\":\"page=");
    w.num(n % 50);
}

/// `user_agent` and `source` (its address, port and AS drawn here, in this order).
fn user_agent_and_source(w: &mut Writer, e: &Event) {
    w.s("\"},\"user_agent\":{\"original\":\"");
    w.s(e.agent);
    w.s("\",\"name\":\"");
    w.s(e.browser);
    w.s("\",\"version\":\"");
    w.s(e.browser_version);
    w.s("\",\"os\":{\"name\":\"");
    w.s(e.os);
    w.s("\",\"version\":\"");
    w.s(e.os_version);
    w.s("\",\"full\":\"");
    w.s(e.os);
    w.s(" ");
    w.s(e.os_version);
    w.s("\"},\"device\":{\"name\":\"Other\"}},\"source\":{\"ip\":\"");
    w.ipv4();
    w.s("\",\"port\":");
    let port = 1024 + w.rng.below(60_000);
    w.num(port);
    w.s(",\"bytes\":");
    w.num(e.request_bytes + 420);
    w.s(",\"geo\":{\"continent_name\":\"");
    w.s(e.continent);
    w.s("\",\"country_iso_code\":\"");
    w.s(e.iso);
    w.s("\",\"country_name\":\"");
    w.s(e.country);
    w.s("\",\"region_name\":\"");
    w.s(e.region);
    w.s("\",\"city_name\":\"");
    w.s(e.city);
    w.s("\",\"location\":{\"lat\":");
    w.s(e.location);
    w.s("}},\"as\":{\"number\":");
    let asn = 1000 + w.rng.below(60_000);
    w.num(asn);
    w.s(",\"organization\":{\"name\":\"");
    w.pick(&ORGS);
}

/// `destination`, `host`, `agent`, `cloud`, `log`, `service`, `trace`, `transaction`, `tags`.
fn host_and_cloud(w: &mut Writer, e: &Event, n: u64) {
    w.s("\"}}},\"destination\":{\"ip\":\"10.0.");
    w.num(e.host);
    w.s(".10\",\"port\":443},\"host\":{\"name\":\"web-");
    w.padded(e.host, 2);
    w.s("\",\"hostname\":\"web-");
    w.padded(e.host, 2);
    w.s(".prod.internal\",\"id\":\"");
    w.hex(e.host.wrapping_mul(0x2545_F491_4F6C_DD1D), 16);
    w.hex(e.host.wrapping_mul(0x9E37_79B9_7F4A_7C15), 16);
    w.s("\",\"ip\":[\"10.0.");
    w.num(e.host);
    w.s(".10\",\"fe80::");
    w.hex(e.host + 0x1a2b, 4);
    w.s(":3cff:fe4d:5e6f\"],\"mac\":[\"02-42-AC-11-00-");
    w.padded(e.host, 2);
    w.s("\"],\"architecture\":\"x86_64\",\"containerized\":false,\"os\":{\"family\":\"debian\",\"kernel\":\"6.1.0-17-amd64\",\"name\":\"Debian GNU/Linux\",\"platform\":\"debian\",\"type\":\"linux\",\"version\":\"12 (bookworm)\"}},\"agent\":{\"type\":\"filebeat\",\"version\":\"8.11.3\",\"name\":\"web-");
    w.padded(e.host, 2);
    w.s("\",\"id\":\"");
    w.hex(e.host.wrapping_mul(0xBF58_476D_1CE4_E5B9), 16);
    w.s("\",\"ephemeral_id\":\"");
    w.hex(e.host.wrapping_mul(0x94D0_49BB_1331_11EB), 16);
    w.s("\"},\"cloud\":{\"provider\":\"aws\",\"region\":\"");
    let region_name = REGIONS[(e.host % 4) as usize];
    w.s(region_name);
    w.s("\",\"availability_zone\":\"");
    w.s(region_name);
    w.s("a\",\"instance\":{\"id\":\"i-");
    w.hex(e.host.wrapping_mul(0xD6E8_FEB8_6659_FD93), 16);
    w.s("\",\"name\":\"web-");
    w.padded(e.host, 2);
    w.s("\"},\"machine\":{\"type\":\"m6i.xlarge\"},\"service\":{\"name\":\"EC2\"}},\"log\":{\"file\":{\"path\":\"/var/log/nginx/access.log\"},\"offset\":");
    w.num(n * 312);
    w.s(",\"level\":\"info\"},\"service\":{\"name\":\"shop-frontend\",\"type\":\"nginx\",\"environment\":\"production\",\"version\":\"2.14.0\"},\"trace\":{\"id\":\"");
    w.hex(e.trace, 16);
    w.hex(e.trace.rotate_left(17), 16);
    w.s("\"},\"transaction\":{\"id\":\"");
    w.hex(e.trace.rotate_left(33), 16);
    w.s("\"},\"tags\":[\"nginx-access\",\"production\",\"forwarded\"],\"ecs\":{\"version\":\"8.11.0\"}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn average_len(d: Dataset, docs: u64) -> f64 {
        let mut buf = String::new();
        let mut total = 0;
        for n in 0..docs {
            buf.clear();
            d.write(7, n, &mut buf);
            let v: serde_json::Value = serde_json::from_str(buf.trim_end())
                .unwrap_or_else(|e| panic!("{} doc {n}: {e}\n{buf}", d.name()));
            assert!(v.is_object());
            total += buf.len() - 1;
        }
        total as f64 / docs as f64
    }

    #[test]
    fn documents_are_json_of_the_stated_size() {
        let small = average_len(Dataset::Small, 2000);
        assert!(
            (116.0..136.0).contains(&small),
            "small averages {small} bytes"
        );
        let httplog = average_len(Dataset::Httplog, 2000);
        assert!(
            (2300.0..2700.0).contains(&httplog),
            "httplog averages {httplog} bytes"
        );
    }

    /// FNV-1a over the first documents of a dataset: a corpus stays the same from release to
    /// release, so that races of one track compare.
    fn fingerprint(d: Dataset, docs: u64) -> u64 {
        let mut buf = String::new();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for n in 0..docs {
            buf.clear();
            d.write(1, n, &mut buf);
            for b in buf.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    }

    #[test]
    fn generated_documents_stay_the_same() {
        assert_eq!(fingerprint(Dataset::Small, 500), SMALL_FINGERPRINT);
        assert_eq!(fingerprint(Dataset::Httplog, 500), HTTPLOG_FINGERPRINT);
    }

    const SMALL_FINGERPRINT: u64 = 0xa79c_965f_7274_d28f;
    const HTTPLOG_FINGERPRINT: u64 = 0xe758_cf6c_e1b9_3add;

    #[test]
    fn document_n_depends_only_on_seed_and_n() {
        let (mut a, mut b) = (String::new(), String::new());
        Dataset::Httplog.write(1, 41, &mut a);
        Dataset::Httplog.write(1, 42, &mut b);
        assert_ne!(a, b);
        b.clear();
        Dataset::Httplog.write(1, 41, &mut b);
        assert_eq!(a, b);
        b.clear();
        Dataset::Httplog.write(2, 41, &mut b);
        assert_ne!(a, b, "the seed changes the data");
    }

    #[test]
    fn timestamps_are_calendar_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        let mut s = String::new();
        Writer {
            buf: &mut s,
            rng: Mix::new(0, 0),
        }
        .timestamp(EPOCH_MS + 86_400_000 * 59 + 3_723_004);
        assert_eq!(s, "2026-03-01T01:02:03.004Z");
    }
}
