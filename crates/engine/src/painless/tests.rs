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
        Val::List(vec![Val::Int(0), Val::Int(1), Val::Int(4)])
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
    let values = Val::List(vec![
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
        &[("values", Val::List(vec![]))],
    )
    .unwrap();
    assert!(matches!(empty, Val::Float(f) if f.is_nan()));
}

#[test]
fn what_is_outside_the_subset_is_named_with_its_place() {
    for (source, says) in [
        ("x -> x * 2", "lambdas"),
        ("try { 1 } catch (Exception e) {}", "`try`"),
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
                .run(&[("values".into(), Val::List(vec![]))], &mut NoDoc)
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
