//! Scripts and their results as Java and Painless compute them.

use super::*;
use serde_json::json;

fn run(source: &str, vars: &[(&str, Val)]) -> Result<Val, String> {
    let script = Script::from_request(
        &json!({"source": source, "params": {"a": 3, "b": 4.5, "name": "Vienna", "list": [1, 2, 3]}}),
    )?;
    let extra: Vec<(String, Val)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    script.run(&extra, &mut NoDoc)
}

fn val(source: &str) -> Val {
    run(source, &[]).unwrap_or_else(|e| panic!("{source}: {e}"))
}

#[test]
fn arithmetic_as_java_does_it() {
    assert_eq!(val("7 / 2"), Val::Int(3));
    assert_eq!(val("7.0 / 2"), Val::Float(3.5));
    assert_eq!(val("-7 % 3"), Val::Int(-1));
    assert_eq!(val("params.a * 2 + 1"), Val::Int(7));
    assert_eq!(val("params.b / params.a"), Val::Float(1.5));
    assert_eq!(val("(int) params.b"), Val::Int(4));
    assert_eq!(val("(double) params.a / 2"), Val::Float(1.5));
    assert_eq!(
        val("'n=' + params.a + ', b=' + params.b"),
        Val::Str("n=3, b=4.5".into())
    );
    assert_eq!(val("1 + 2 * 3 - 4 / 2"), Val::Int(5));
    assert_eq!(
        val("params.a > 2 && params.b <= 4.5 ? 'yes' : 'no'"),
        Val::Str("yes".into())
    );
    assert_eq!(val("Math.max(params.a, 10)"), Val::Int(10));
    assert_eq!(val("Math.round(2.5)"), Val::Int(3));
    assert_eq!(
        val("Math.sqrt(16) + Math.pow(2, 10) + Math.abs(-1.5)"),
        Val::Float(1029.5)
    );
    assert!(matches!(val("Math.log(Math.E)"), Val::Float(f) if (f - 1.0).abs() < 1e-12));
    assert!(run("1 / 0", &[]).unwrap_err().contains("/ by zero"));
}

#[test]
fn statements_loops_and_collections() {
    let source = r#"
        // The stack overflow track's answer ratio.
        if (params.a > 0 && params.b > 0) { return params.b / params.a; } return -1;
    "#;
    assert_eq!(val(source), Val::Float(1.5));
    let source = "def total = 0; for (int i = 0; i < params.list.size(); ++i) { total += params.list[i]; } return total;";
    assert_eq!(val(source), Val::Int(6));
    let source =
        "double sum = 0; for (def x : params.list) { if (x == 2) { continue; } sum += x; } sum";
    assert_eq!(val(source), Val::Float(4.0));
    let source =
        "List out = new ArrayList(); int i = 0; while (i < 3) { out.add(i * i); i++; } return out;";
    assert_eq!(
        val(source),
        Val::list(vec![Val::Int(0), Val::Int(1), Val::Int(4)])
    );
    let source =
        "Map m = new HashMap(); m.put('x', 1); m['y'] = 2; return m.get('x') + m.y + m.size();";
    assert_eq!(val(source), Val::Int(5));
    let source = "String s = params.name; return s.substring(0, 3).toUpperCase() + s.length() + s.contains('enn');";
    assert_eq!(val(source), Val::Str("VIE6true".into()));
    assert!(run("while (true) {}", &[]).unwrap_err().contains("steps"));
    // Doubling a string or a list stops at a bound, not at the machine's memory.
    let e = run("String s = 'x'; while (true) { s = s + s; }", &[]).unwrap_err();
    assert!(e.contains("more than"), "{e}");
    let e = run("List l = [1]; while (true) { l.addAll(l); }", &[]).unwrap_err();
    assert!(e.contains("more than"), "{e}");
}

#[test]
fn moving_functions_as_elasticsearch_computes_them() {
    let values = Val::list(vec![
        Val::Float(1.0),
        Val::Float(f64::NAN),
        Val::Float(2.0),
        Val::Float(6.0),
    ]);
    let with = |source: &str| run(source, &[("values", values.clone())]).unwrap();
    assert_eq!(
        with("MovingFunctions.unweightedAvg(values)"),
        Val::Float(3.0)
    );
    assert_eq!(with("MovingFunctions.max(values)"), Val::Float(6.0));
    assert_eq!(with("MovingFunctions.min(values)"), Val::Float(1.0));
    assert_eq!(with("MovingFunctions.sum(values)"), Val::Float(9.0));
    // Weights 1, 2, 3 over the values that are numbers: (1 + 4 + 18) / 6.
    assert_eq!(
        with("MovingFunctions.linearWeightedAvg(values)"),
        Val::Float(23.0 / 6.0)
    );
    // ewma(0.5): 1, then 2·0.5 + 1·0.5 = 1.5, then 6·0.5 + 1.5·0.5 = 3.75.
    assert_eq!(with("MovingFunctions.ewma(values, 0.5)"), Val::Float(3.75));
    let sd = with("MovingFunctions.stdDev(values, MovingFunctions.unweightedAvg(values))");
    assert!(
        matches!(sd, Val::Float(f) if (f - (14.0f64 / 3.0).sqrt()).abs() < 1e-12),
        "{sd:?}"
    );
    let empty = run(
        "MovingFunctions.unweightedAvg(values)",
        &[("values", Val::list(vec![]))],
    )
    .unwrap();
    assert!(matches!(empty, Val::Float(f) if f.is_nan()));
}

#[test]
fn what_is_outside_the_subset_is_named_with_its_place() {
    for (source, says) in [
        ("x -> x * 2", "lambdas"),
        ("do { } while (true)", "`do`"),
        (
            "try { 1 } catch (Foo e) {}",
            "`Foo` is not an exception class",
        ),
        ("params.list.frobnicate()", "method `frobnicate`"),
        // Java has it; the subset does not: refused when parsed, never caught at run time.
        (
            "try { params.list.iterator() } catch (Exception e) {}",
            "method `iterator`",
        ),
        ("new Random()", "`new Random(...)`"),
        ("x instanceof Widget", "`Widget` is not a class"),
        ("Math.foo(1)", "`Math.foo`"),
        ("emit(1)", "function `emit`"),
        (
            "MovingFunctions.holt(values, 0.5, 0.5)",
            "MovingFunctions.holt",
        ),
        ("return 'unclosed", "not closed"),
        ("1 +", "expected an expression"),
        ("x = 1", "not declared"),
    ] {
        let e = match Script::from_request(&json!(source)) {
            Err(e) => e,
            Ok(s) => s
                .run(&[("values".into(), Val::list(vec![]))], &mut NoDoc)
                .unwrap_err(),
        };
        assert!(e.contains(says), "{source}: {e}");
    }
    let e = Script::from_request(&json!("if (true) {\n  1 +* 2\n}")).unwrap_err();
    assert!(e.contains("2:6"), "{e}");
    let deep = format!("{}1{}", "(".repeat(500), ")".repeat(500));
    assert!(Script::from_request(&json!(deep))
        .unwrap_err()
        .contains("nests deeper"));
    assert!(Script::from_request(&json!({"id": "stored"}))
        .unwrap_err()
        .contains("stored scripts"));
}

/// Runs an ingest script on `ctx`; what it returned and `ctx` as JSON.
fn ingest(
    source: &str,
    params: serde_json::Value,
    ctx: serde_json::Value,
) -> Result<serde_json::Value, String> {
    let script = Script::for_ingest(&json!({"source": source, "params": params}))?;
    let (_, ctx) = script.run_ctx(Val::from_json(&ctx), 1_714_557_600_123)?;
    ctx.to_json().map_err(|e| e.to_string())
}

/// The elastic/logs integrations' own scripts (Elastic's Fleet packages, as the shared
/// track ships them).
const HANDLE_MAP: &str = r#"
void handleMap(Map map) {
  for (def x : map.values()) {
    if (x instanceof Map) {
        handleMap(x);
    } else if (x instanceof List) {
        handleList(x);
    }
  }
  map.values().removeIf(v -> v == null);
}
void handleList(List list) {
  for (def x : list) {
      if (x instanceof Map) {
          handleMap(x);
      } else if (x instanceof List) {
          handleList(x);
      }
  }
}
handleMap(ctx);
"#;

#[test]
fn maps_passed_to_functions_change_where_they_are() {
    let out = ingest(
        HANDLE_MAP,
        json!({}),
        json!({"a": null, "b": {"c": null, "d": 1, "e": [{"f": null, "g": 2}]}, "h": "x"}),
    )
    .unwrap();
    assert_eq!(out, json!({"b": {"d": 1, "e": [{"g": 2}]}, "h": "x"}));
    // A map put into ctx is the same map: a change through either name is seen in both.
    let out = ingest(
        "if (ctx.client == null) { Map map = new HashMap(); ctx.put('client', map); map.put('port', 80); } ctx.client.ip = '10.0.0.1';",
        json!({}),
        json!({}),
    )
    .unwrap();
    assert_eq!(out["client"], json!({"port": 80, "ip": "10.0.0.1"}));
    let out = ingest(
        "def l = ctx.tags; l.add('b'); ctx.n = l.size();",
        json!({}),
        json!({"tags": ["a"]}),
    )
    .unwrap();
    assert_eq!(out, json!({"tags": ["a", "b"], "n": 2}));
}

#[test]
fn the_integrations_private_address_scripts() {
    let apache = r#"
boolean isPrivateCIDR(def ip) {
  CIDR class_a_network = new CIDR('10.0.0.0/8');
  CIDR class_b_network = new CIDR('172.16.0.0/12');
  CIDR class_c_network = new CIDR('192.168.0.0/16');
  try {
    return class_a_network.contains(ip) || class_b_network.contains(ip) || class_c_network.contains(ip);
  } catch (IllegalArgumentException e) {
    return false;
  }
}
try {
  if (ctx.client == null) {
    Map map = new HashMap();
    ctx.put("client", map);
  }
  def found = false;
  for (def item : ctx.apache.access.remote_addresses) {
    if (!isPrivateCIDR(item)) {
      ctx.client.ip = item;
      found = true;
      break;
    }
  }
  if (!found) {
    ctx.client.ip = ctx.apache.access.remote_addresses[0];
  }
} catch (Exception e) {
  ctx.client.ip = null;
}"#;
    let with = |addrs: serde_json::Value| {
        ingest(
            apache,
            json!({}),
            json!({"apache": {"access": {"remote_addresses": addrs}}}),
        )
        .unwrap()["client"]["ip"]
            .clone()
    };
    assert_eq!(
        with(json!(["10.1.1.1", "not-an-ip", "172.20.0.1", "8.8.8.8"])),
        json!("not-an-ip")
    );
    assert_eq!(
        with(json!(["10.1.1.1", "192.168.1.1", "8.8.8.8"])),
        json!("8.8.8.8")
    );
    assert_eq!(with(json!(["10.1.1.1", "172.16.5.5"])), json!("10.1.1.1"));
    let nginx = r#"
boolean isPrivate(def dot, def ip) {
  try {
    StringTokenizer tok = new StringTokenizer(ip, dot);
    int firstByte = Integer.parseInt(tok.nextToken());
    int secondByte = Integer.parseInt(tok.nextToken());
    if (firstByte == 10) { return true; }
    if (firstByte == 192 && secondByte == 168) { return true; }
    if (firstByte == 172 && secondByte >= 16 && secondByte <= 31) { return true; }
    if (firstByte == 127) { return true; }
    return false;
  }
  catch (Exception e) {
    return false;
  }
} try {
  ctx.source.address = null;
  if (ctx.nginx.access.remote_ip_list == null) { return; }
  def found = false;
  for (def item : ctx.nginx.access.remote_ip_list) {
    if (!isPrivate(params.dot, item)) {
      ctx.source.address = item;
      found = true;
      break;
    }
  }
  if (!found) { ctx.source.address = ctx.nginx.access.remote_ip_list[0]; }
} catch (Exception e) {
  ctx.source.address = null;
}"#;
    let run = |ctx: serde_json::Value| ingest(nginx, json!({"dot": "."}), ctx).unwrap();
    let out = run(
        json!({"source": {}, "nginx": {"access": {"remote_ip_list": ["127.0.0.1", "10.0.0.2", "81.2.69.144"]}}}),
    );
    assert_eq!(out["source"]["address"], json!("81.2.69.144"));
    // `2001:db8::1` has no dot: nextToken's second call throws, caught: not private.
    let out = run(
        json!({"source": {}, "nginx": {"access": {"remote_ip_list": ["192.168.0.1", "2001:db8::1"]}}}),
    );
    assert_eq!(out["source"]["address"], json!("2001:db8::1"));
    // No `source` object: the NullPointerException is caught by the outer catch, which
    // throws again on `ctx.source.address`: the script fails, as Java's would.
    let e = ingest(
        nginx,
        json!({"dot": "."}),
        json!({"nginx": {"access": {"remote_ip_list": ["1.1.1.1"]}}}),
    )
    .unwrap_err();
    assert!(e.contains("NullPointerException"), "{e}");
}

#[test]
fn regexes_streams_and_metadata() {
    let slow = "ctx.drop = ctx.message ==~ /^# Time:.*/ || ctx.message ==~ /^[\\/\\w\\.]+, Version: .*\\. started with:.*/ms";
    let check = |m: &str| ingest(slow, json!({}), json!({"message": m})).unwrap()["drop"].clone();
    assert_eq!(check("# Time: 2024-01-01"), json!(true));
    assert_eq!(
        check("/usr/sbin/mysqld, Version: 8.0.1 (MySQL). started with:\nTcp port: 3306"),
        json!(true)
    );
    assert_eq!(check("# User@Host: root"), json!(false));
    let state =
        "ctx.ok = ctx.code == null || (ctx.code ==~ /^0[012].*/); ctx.found = ctx.code =~ /1/";
    assert_eq!(
        ingest(state, json!({}), json!({"code": "01000"})).unwrap()["ok"],
        json!(true)
    );
    assert_eq!(
        ingest(state, json!({}), json!({"code": "42P01"})).unwrap()["ok"],
        json!(false)
    );
    assert_eq!(
        ingest(state, json!({}), json!({"code": "42P01"})).unwrap()["found"],
        json!(true)
    );
    let dedupe = "for (field in params.fields) { if (ctx.mysql[field] instanceof List) { def vals = ctx.mysql[field]; vals = vals.stream().distinct().collect(Collectors.toList()); if (vals.size() == 1) { ctx.mysql[field] = vals[0] } else { ctx.mysql[field] = vals } } }";
    let out = ingest(
        dedupe,
        json!({"fields": ["a", "b", "c"]}),
        json!({"mysql": {"a": [1, 1], "b": ["x", "y", "x"], "c": 3}}),
    )
    .unwrap();
    assert_eq!(out["mysql"], json!({"a": 1, "b": ["x", "y"], "c": 3}));
    let fleet = "if (ctx?.event == null) { ctx.event = [:]; } ctx.event.ingested = metadata().now.withNano(0).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);";
    assert_eq!(
        ingest(fleet, json!({}), json!({})).unwrap()["event"]["ingested"],
        json!("2024-05-01T10:00:00Z")
    );
    let m = "def m = /(?<user>\\w+)@(\\w+)/.matcher(ctx.to); ctx.ok = m.find(); ctx.u = m.group('user'); ctx.h = m.group(2);";
    let out = ingest(m, json!({}), json!({"to": "mail ann@example now"})).unwrap();
    assert_eq!(
        (out["ok"].clone(), out["u"].clone(), out["h"].clone()),
        (json!(true), json!("ann"), json!("example"))
    );
}

#[test]
fn exceptions_catch_what_java_catches_and_bounds_catch_nothing() {
    assert_eq!(val("try { Integer.parseInt('x'); return 1; } catch (NumberFormatException e) { return 2; }"), Val::Int(2));
    assert_eq!(val("try { Integer.parseInt('3000000000'); return 1; } catch (IllegalArgumentException e) { return e.getMessage(); }"), Val::Str("For input string: \"3000000000\"".into()));
    assert_eq!(val("try { def m = null; m.size(); return 1; } catch (NullPointerException e) { return 2; }"), Val::Int(2));
    assert_eq!(val("try { throw new IllegalStateException('boom'); } catch (RuntimeException e) { return e.getMessage(); }"), Val::Str("boom".into()));
    // A catch of another class lets the exception through.
    let e = run(
        "try { Integer.parseInt('x'); } catch (NullPointerException e) { return 2; }",
        &[],
    )
    .unwrap_err();
    assert!(e.contains("NumberFormatException"), "{e}");
    // The engine's bounds are no exception a script catches.
    let e = run(
        "try { while (true) {} } catch (Exception e) { return 1; }",
        &[],
    )
    .unwrap_err();
    assert!(e.contains("steps"), "{e}");
    let e = run(
        "int f(int n) { return f(n + 1); } try { return f(0); } catch (Exception e) { return -1; }",
        &[],
    )
    .unwrap_err();
    assert!(e.contains("calls nest"), "{e}");
    // Scopes are whole again after a caught exception inside loops and calls.
    assert_eq!(val("int g(def x) { for (int i = 0; i < 3; i++) { if (i == 1) { x.size(); } } return 0; } def t = 0; for (int i = 0; i < 4; i++) { try { g(null); } catch (Exception e) { t += i; } } return t;"), Val::Int(6));
    assert_eq!(val("boolean even(int n) { return n == 0 ? true : odd(n - 1); } boolean odd(int n) { return n == 0 ? false : even(n - 1); } return even(10);"), Val::Bool(true));
}

#[test]
fn cycles_and_depth_are_refused_or_survived() {
    let e = run("Map m = new HashMap(); m.put('self', m); return 1;", &[]).unwrap_err();
    assert!(e.contains("cycle"), "{e}");
    let e = run("List a = []; List b = [a]; a.add(b); return 1;", &[]).unwrap_err();
    assert!(e.contains("cycle"), "{e}");
    // A chain deeper than any stack: built, dropped without recursion.
    assert_eq!(val("Map top = [:]; def cur = top; for (int i = 0; i < 40000; i++) { Map n = [:]; cur.put('a', n); cur = n; } return 1;"), Val::Int(1));
    let e = ingest(
        "def cur = ctx; for (int i = 0; i < 500; i++) { Map n = [:]; cur.put('a', n); cur = n; }",
        json!({}),
        json!({}),
    )
    .unwrap_err();
    assert!(e.contains("nested more than"), "{e}");
    // Sets keep one of each value; sorting with a comparator is stable.
    assert_eq!(
        val("Set s = new HashSet(); s.add(1); s.add(1); s.add(2); return s.size();"),
        Val::Int(2)
    );
    assert_eq!(
        val("List l = ['bb', 'a', 'cc', 'd']; l.sort((x, y) -> x.length() - y.length()); return String.join(',', l);"),
        Val::Str("a,d,bb,cc".into())
    );
    assert_eq!(
        val("Map m = ['a': 1, 'b': 2]; m.keySet().removeIf(k -> k == 'a'); return m.toString();"),
        Val::Str("{b=2}".into())
    );
}

#[test]
fn checking_for_cycles_is_bounded_by_the_run() {
    // Each put of the big map into another walks it: a loop of them stops at the bound, not
    // after minutes.
    let source = "List big = []; for (int i = 0; i < 20000; i++) { big.add([i]); } \
                  for (int j = 0; j < 100000; j++) { Map m = [:]; m.put('b', big); } return 1;";
    let e = run(source, &[]).unwrap_err();
    assert!(e.contains("lists and maps"), "{e}");
    // A run starts with the whole budget again.
    assert_eq!(
        val("Map m = [:]; m.put('a', [1, [2]]); return m.a.size();"),
        Val::Int(2)
    );
}

#[test]
fn finding_empty_matches_steps_over_whole_characters() {
    let source = "def m = /x*/.matcher('éé'); int n = 0; while (m.find()) { n++; } return n;";
    // Java finds the empty match before each character and at the end: 3.
    assert_eq!(val(source), Val::Int(3));
}
