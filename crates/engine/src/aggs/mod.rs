//! Aggregations, on tantivy's aggregation framework (its request and response formats are
//! Elasticsearch's). A request is checked once, when the search is compiled: every
//! aggregation type, field and parameter either runs as Elasticsearch would run it, or the
//! search is refused naming what the engine lacks. Nothing is dropped and run as something else.

use crate::mapping::FieldType;
use crate::mapping::Mapping;
use serde_json::{Map, Value};
use tantivy::aggregation::agg_req::Aggregations;
use tantivy::aggregation::agg_result::AggregationResults;
use tantivy::aggregation::intermediate_agg_result::IntermediateAggregationResults;
use tantivy::aggregation::{AggContextParams, DistributedAggregationCollector};

/// Aggregation types the engine runs.
pub const RUN: [&str; 29] = [
    "terms",
    "nested",
    "time_series",
    "geohex_grid",
    "significant_terms",
    "auto_date_histogram",
    "geo_bounds",
    "geo_distance",
    "geohash_grid",
    "geotile_grid",
    "date_range",
    "geo_centroid",
    "filter",
    "filters",
    "histogram",
    "date_histogram",
    "range",
    "composite",
    "multi_terms",
    "avg",
    "min",
    "max",
    "sum",
    "value_count",
    "stats",
    "extended_stats",
    "cardinality",
    "percentiles",
    "top_hits",
];

/// Parameters that change how Elasticsearch spreads the work over shards, not the result
/// on one shard: accepted and not passed on.
const SHARD_HINTS: [&str; 4] = [
    "execution_hint",
    "collect_mode",
    "show_term_doc_count_error",
    "shard_min_doc_count",
];

/// A checked aggregation request, ready to run with a search.
#[derive(Debug, Clone)]
pub struct AggPlan {
    request: Aggregations,
    /// The date_range aggregations, whose answers are reshaped as Elasticsearch's.
    date_ranges: Vec<date_range::DateRange>,
    /// The aggregations on geo positions, run beside tantivy's.
    points: points::PointAggs,
    /// The auto_date_histograms, and the date_histograms tantivy cannot run, whose buckets
    /// each search chooses from its matches.
    autos: Vec<auto_date::AutoHistogram>,
    /// tantivy's date_histograms, whose keys are printed again.
    date_keys: date_histogram::DateKeys,
    /// The pipeline aggregations, computed from the others' answers.
    pipelines: pipeline::Pipelines,
    /// The significant_terms, scored against the whole index after the search.
    significant: Vec<significant::Significant>,
    /// `meta`, integer keys and counts, as Elasticsearch shows them.
    shapes: shape::Shapes,
    /// Top-level percentiles, whose t-digests the search's own pass collects.
    percentiles: std::sync::Arc<Vec<percentiles::PercentilesAgg>>,
    /// Percentiles under bucket aggregations, collected in each shown bucket by a second
    /// pass.
    bucket_percentiles: std::sync::Arc<Vec<percentiles::PercentilesAgg>>,
    /// The top-level nested aggregations, run on the objects of the matched documents.
    nested: std::sync::Arc<Vec<nested::NestedAgg>>,
    /// Each search keeps its collected parts unfinished, for the answers of several indices
    /// to be merged into one ([`AggPlan::merge`]).
    pub keep_parts: bool,
}

/// What one search's aggregations collected, before they are finished: tantivy's
/// intermediate results and the engine's own collectors'.
pub type Parts = (
    IntermediateAggregationResults,
    Option<points::PointResults>,
    Option<percentiles::Collected>,
);

/// What a search's aggregations collect: tantivy's, those on geo positions, and the buckets
/// chosen for its auto_date_histograms.
pub struct AggFruit {
    results: AggregationResults,
    points: Option<points::PointResults>,
    percentiles: Option<percentiles::Collected>,
    /// The second pass's answers, each with the percentiles it ran.
    bucket_percentiles: percentiles::BucketAnswers,
    autos: Vec<auto_date::Chosen>,
    /// Each significant_terms' answer, by name.
    significant: Vec<(String, Value)>,
    /// The parts, unfinished, when the plan keeps them for merging, with the second pass
    /// to run once the merged answer shows the buckets.
    parts: Option<Parts>,
    second: Option<percentiles::SecondPass>,
    /// Each nested aggregation's answer, by name.
    nested: Vec<(String, Value)>,
}

/// The collector of one search's aggregations. The point aggregations' collector is left out
/// when there are none: it would be called for every matching document.
pub type AggCollector = (
    DistributedAggregationCollector,
    Option<points::PointAggs>,
    Option<percentiles::DigestCollector>,
);

/// What turns a search's collected aggregations into its [`AggFruit`]: the buckets chosen
/// for its auto_date_histograms.
pub struct Finish {
    autos: Vec<auto_date::Chosen>,
    /// The significant_terms with the foreground's size and the searcher for the
    /// background's frequencies.
    significant: Option<(Vec<significant::Significant>, u64, tantivy::Searcher)>,
    /// The percentiles under bucket aggregations, with the query and searcher their second
    /// pass runs on.
    second: Option<percentiles::SecondPass>,
    /// The request tantivy ran, to finish its intermediate results; None when the parts are
    /// kept unfinished.
    request: Option<Aggregations>,
    /// The nested aggregations, with the search's searcher and query.
    nested: Option<nested::NestedPass>,
}

impl Finish {
    pub fn finish(self, (intermediate, points, digests): Parts) -> tantivy::Result<AggFruit> {
        let Some(request) = self.request else {
            return Ok(AggFruit {
                results: AggregationResults::default(),
                points: None,
                percentiles: None,
                bucket_percentiles: Vec::new(),
                autos: self.autos,
                significant: Vec::new(),
                parts: Some((intermediate, points, digests)),
                second: self.second,
                nested: Vec::new(),
            });
        };
        let mut results = intermediate.into_final_result(request, Default::default())?;
        let mut answers = Vec::new();
        if let Some((sigs, fg_size, searcher)) = &self.significant {
            for sig in sigs {
                let fg = results
                    .0
                    .remove(&sig.marker())
                    .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
                    .unwrap_or(Value::Null);
                answers.push((sig_name(sig), sig.answer(&fg, *fg_size, searcher)?));
            }
        }
        let bucket_percentiles = match &self.second {
            Some(second) => second.run(&to_json(&results))?,
            None => Vec::new(),
        };
        Ok(AggFruit {
            results,
            points,
            percentiles: digests,
            bucket_percentiles,
            autos: self.autos,
            significant: answers,
            parts: None,
            second: None,
            nested: match &self.nested {
                Some(pass) => pass.run()?,
                None => Vec::new(),
            },
        })
    }
}

fn sig_name(sig: &significant::Significant) -> String {
    sig.marker().trim_end_matches('\u{6}').to_string()
}

impl AggPlan {
    /// Checks the body's `aggs` (or `aggregations`) against the mapping; the queries of
    /// `filter` aggregations are compiled for `index`.
    pub fn compile(
        aggs: &Value,
        mapping: &Mapping,
        index: &tantivy::Index,
    ) -> Result<AggPlan, String> {
        Self::checked(aggs, Some((mapping, index)))
    }

    /// What can be checked before the race, with no index yet: types and parameters.
    pub fn check(aggs: &Value) -> Result<(), String> {
        Self::checked(aggs, None).map(|_| ())
    }

    fn checked(aggs: &Value, ctx: Option<(&Mapping, &tantivy::Index)>) -> Result<AggPlan, String> {
        let mut level = Level {
            mapping: ctx.map(|(m, _)| m),
            ctx,
            filters: filters::Filters::default(),
            date_ranges: Vec::new(),
            points: Vec::new(),
            autos: Vec::new(),
            date_keys: Default::default(),
            pipelines: Default::default(),
            enclosing: None,
            significant: Vec::new(),
            shapes: shape::Shapes::default(),
            percentiles: Vec::new(),
            bucket_percentiles: Vec::new(),
            parents: Vec::new(),
            nested: Vec::new(),
        };
        let rewritten = level.rewrite(aggs, "aggs", &[])?;
        let mut request: Aggregations =
            serde_json::from_value(rewritten.clone()).map_err(|e| format!("aggregations: {e}"))?;
        // Whatever tantivy would read past without a word is refused here instead.
        let read = serde_json::to_value(&request).map_err(|e| e.to_string())?;
        unread(&rewritten, &read, "aggs")?;
        // Filter aggregations carry their index: the mapping is copied only for them.
        if let Some((m, i)) = ctx.filter(|_| !level.filters.is_empty()) {
            let owned = std::sync::Arc::new((m.clone(), i.clone()));
            level.filters.attach(&mut request, &owned)?;
        }
        Ok(AggPlan {
            request,
            date_ranges: level.date_ranges,
            points: points::PointAggs(std::sync::Arc::new(level.points)),
            autos: level.autos,
            date_keys: level.date_keys,
            pipelines: level.pipelines,
            significant: level.significant,
            shapes: level.shapes,
            percentiles: std::sync::Arc::new(level.percentiles),
            bucket_percentiles: std::sync::Arc::new(level.bucket_percentiles),
            nested: std::sync::Arc::new(level.nested),
            keep_parts: false,
        })
    }

    /// The response's `aggregations`, as Elasticsearch shapes them; an error where a pipeline
    /// aggregation's script fails on them.
    pub fn to_json(&self, fruit: &AggFruit) -> Result<Value, String> {
        let mut v = to_json(&fruit.results);
        date_range::reshape(&mut v, &self.date_ranges);
        auto_date::reshape(&mut v, &fruit.autos);
        self.date_keys.apply(&mut v);
        if let Value::Object(map) = &mut v {
            if let Some(points) = &fruit.points {
                map.extend(self.points.to_json(points));
            }
            map.extend(fruit.significant.iter().cloned());
            map.extend(fruit.nested.iter().cloned());
        }
        if let Some(digests) = &fruit.percentiles {
            percentiles::apply(&self.percentiles, digests, &mut v)?;
        }
        for (agg, digests) in &fruit.bucket_percentiles {
            percentiles::apply(std::slice::from_ref(agg), digests, &mut v)?;
        }
        self.pipelines.apply(&mut v)?;
        self.shapes.apply(&mut v);
        Ok(v)
    }

    /// The collector for one search. An auto_date_histogram first finds the extent of the
    /// matches' dates (a pass of its own), to choose its buckets.
    pub fn prepare(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn tantivy::query::Query,
    ) -> tantivy::Result<(AggCollector, Finish)> {
        let mut request = self.request.clone();
        let mut chosen = Vec::new();
        for (path, marker, req, c) in auto_date::resolve(&self.autos, searcher, query)? {
            if !req.is_null() {
                let agg = serde_json::from_value(req)
                    .map_err(|e| tantivy::TantivyError::InvalidArgument(e.to_string()))?;
                let mut level = &mut request;
                for name in &path {
                    level = &mut level
                        .get_mut(name)
                        .ok_or_else(|| {
                            tantivy::TantivyError::InvalidArgument(format!(
                                "no aggregation `{name}` above `{marker}`"
                            ))
                        })?
                        .sub_aggregation;
                }
                level.insert(marker, agg);
            }
            chosen.push(c);
        }
        let finishing = (!self.keep_parts).then(|| request.clone());
        Ok((
            (
                DistributedAggregationCollector::from_aggs(request, AggContextParams::default()),
                (!self.points.is_empty()).then(|| self.points.clone()),
                (!self.percentiles.is_empty())
                    .then(|| percentiles::DigestCollector::top_level(self.percentiles.clone())),
            ),
            Finish {
                autos: chosen,
                significant: if self.significant.is_empty() {
                    None
                } else {
                    let fg_size = searcher.search(query, &tantivy::collector::Count)? as u64;
                    Some((self.significant.clone(), fg_size, searcher.clone()))
                },
                second: (!self.bucket_percentiles.is_empty()).then(|| percentiles::SecondPass {
                    aggs: self.bucket_percentiles.clone(),
                    query: query.box_clone(),
                    searcher: searcher.clone(),
                }),
                request: finishing,
                nested: (!self.nested.is_empty()).then(|| nested::NestedPass {
                    aggs: self.nested.clone(),
                    searcher: searcher.clone(),
                    query: query.box_clone(),
                }),
            },
        ))
    }
}

/// The response's `aggregations` of tantivy's part.
pub fn to_json(results: &AggregationResults) -> Value {
    let mut v = serde_json::to_value(results).unwrap_or(Value::Null);
    filters::regroup(&mut v);
    geo::regroup(&mut v);
    ipv4_keys(&mut v);
    v
}

/// tantivy keys an ip bucket by its IPv6 form; Elasticsearch shows an IPv4 address as one.
fn ipv4_keys(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(k)) = map.get_mut("key") {
                if let Some(v4) = k
                    .strip_prefix("::ffff:")
                    .filter(|rest| rest.parse::<std::net::Ipv4Addr>().is_ok())
                {
                    *k = v4.to_string();
                }
            }
            // A top_hits' documents are the user's, not bucket keys.
            map.iter_mut()
                .filter(|(k, _)| k.as_str() != "hits")
                .for_each(|(_, v)| ipv4_keys(v));
        }
        Value::Array(items) => items.iter_mut().for_each(ipv4_keys),
        _ => {}
    }
}

/// One request's rewriting: the mapping and index it is checked against, and the filter
/// aggregations found on the way.
struct Level<'a> {
    mapping: Option<&'a Mapping>,
    ctx: Option<(&'a Mapping, &'a tantivy::Index)>,
    filters: filters::Filters,
    date_ranges: Vec<date_range::DateRange>,
    points: Vec<(String, points::PointAgg)>,
    autos: Vec<auto_date::AutoHistogram>,
    date_keys: date_histogram::DateKeys,
    pipelines: pipeline::Pipelines,
    /// The kind of the aggregation whose sub-aggregations are being rewritten.
    enclosing: Option<String>,
    significant: Vec<significant::Significant>,
    shapes: shape::Shapes,
    percentiles: Vec<percentiles::PercentilesAgg>,
    bucket_percentiles: Vec<percentiles::PercentilesAgg>,
    /// The bucket aggregations whose sub-aggregations are being rewritten, outermost first,
    /// each as the digest collector buckets it (None where it cannot). Other kinds with
    /// sub-aggregations push nothing, so the stack is shorter than the path under them.
    parents: Vec<Option<bucket_keys::Parent>>,
    nested: Vec<nested::NestedAgg>,
}

impl Level<'_> {
    fn rewrite(&mut self, aggs: &Value, at: &str, path: &[String]) -> Result<Value, String> {
        let Some(aggs) = aggs.as_object() else {
            return Err(format!("`{at}` must be an object of named aggregations"));
        };
        let mut out = Map::new();
        for (name, agg) in aggs {
            let here = format!("{at}.{name}");
            let Some(def) = agg.as_object() else {
                return Err(format!("aggregation `{here}` must be an object"));
            };
            let mut kinds = def
                .keys()
                .filter(|k| !matches!(k.as_str(), "aggs" | "aggregations" | "meta"));
            let (Some(kind), None) = (kinds.next(), kinds.next()) else {
                return Err(format!(
                    "aggregation `{here}` must have exactly one type (it has {})",
                    def.keys().cloned().collect::<Vec<_>>().join(", ")
                ));
            };
            if pipeline::KINDS.contains(&kind.as_str()) {
                let params = def[kind.as_str()]
                    .as_object()
                    .ok_or_else(|| format!("aggregation `{here}`: `{kind}` must be an object"))?;
                let siblings: Vec<&String> = aggs.keys().filter(|k| *k != name).collect();
                self.shapes.note(path, name, kind, def);
                self.pipelines.push(
                    path,
                    name,
                    kind,
                    params,
                    &siblings,
                    self.enclosing.as_deref(),
                    &here,
                )?;
                continue;
            }
            if !RUN.contains(&kind.as_str()) {
                return Err(format!(
                "aggregation `{here}` is a `{kind}`, which the embedded engine does not run{} (it runs {})",
                why_not(kind),
                RUN.join(", ")
            ));
            }
            let params = def[kind.as_str()]
                .as_object()
                .ok_or_else(|| format!("aggregation `{here}`: `{kind}` must be an object"))?;
            let sub = def.get("aggs").or_else(|| def.get("aggregations"));
            let field = params.get("field").and_then(Value::as_str);
            if let Some(p) = field.and_then(|f| self.mapping?.nested_only(f)) {
                return Err(format!("aggregation `{here}`: `{}` is a field of the nested `{p}`, which Elasticsearch finds no values of outside a `nested` aggregation (put it under one)", field.unwrap_or_default()));
            }
            self.shapes.note(path, name, kind, def);
            let at = Here {
                name,
                here: &here,
                path,
            };
            self.rewrite_one(kind, params, sub, &at, &mut out)?;
        }
        Ok(Value::Object(out))
    }

    /// One named aggregation into tantivy's request (`out`), or into the engine's own
    /// collectors (filters, date ranges, point and significant-terms aggregations, calendar and
    /// auto date histograms).
    fn rewrite_one(
        &mut self,
        kind: &str,
        params: &Map<String, Value>,
        sub: Option<&Value>,
        at: &Here<'_>,
        out: &mut Map<String, Value>,
    ) -> Result<(), String> {
        let outer = self.enclosing.replace(kind.to_string());
        let r = self.rewrite_one_inner(kind, params, sub, at, out);
        self.enclosing = outer;
        r
    }

    fn rewrite_one_inner(
        &mut self,
        kind: &str,
        params: &Map<String, Value>,
        sub: Option<&Value>,
        at: &Here<'_>,
        out: &mut Map<String, Value>,
    ) -> Result<(), String> {
        let (name, here, path) = (at.name, at.here, at.path);
        let mapping = self.mapping;
        if matches!(kind, "filter" | "filters") {
            return self.rewrite_filters(kind, params, sub, at, out);
        }
        if kind == "time_series" {
            let mut request = time_series::request(params, mapping, &here)?;
            if let Some(sub) = sub {
                let mut inner = path.to_vec();
                inner.push(name.clone());
                request["aggs"] = self.rewrite(sub, &here, &inner)?;
            }
            out.insert(name.clone(), request);
            return Ok(());
        }
        if kind == "date_range" {
            let (marker, mut request, spec) = date_range::rewrite(name, params, mapping, &here)?;
            if let Some(sub) = sub {
                let mut inner = path.to_vec();
                inner.push(marker.clone());
                request["aggs"] = self.rewrite(sub, &here, &inner)?;
            }
            self.date_ranges.push(spec);
            out.insert(marker, request);
            return Ok(());
        }
        if self.rewrite_top_level(kind, params, sub, at, out)? {
            return Ok(());
        }
        if kind == "date_histogram" && self.own_date_histogram(params, sub, at)? {
            return Ok(());
        }
        if self.rewrite_geo_metric(kind, params, sub, at, out)? {
            return Ok(());
        }
        if let Some(order) = params.get("order") {
            order_by_buckets(order, sub, &here)?;
        }
        let mut rewritten = Map::new();
        let tantivy_params = params_for(kind, params, mapping, &here)?;
        // A percentiles the digest collector runs is its alone (tantivy's would only be
        // replaced).
        if kind == "percentiles"
            && self.note_percentiles(name, params, &tantivy_params, path, &here)?
        {
            return Ok(());
        }
        rewritten.insert(kind.to_string(), Value::Object(tantivy_params.clone()));
        if let Some(sub) = sub {
            let mut inner = path.to_vec();
            inner.push(name.clone());
            // Percentiles under bucket aggregations get a t-digest per bucket.
            let mapped = params
                .get("field")
                .and_then(Value::as_str)
                .and_then(|f| mapping?.field(f).map(|d| d.kind.clone()));
            self.parents.push(bucket_keys::Parent::of(
                name,
                kind,
                params,
                &tantivy_params,
                mapped.as_ref(),
            ));
            let rewritten_sub = self.rewrite(sub, &here, &inner);
            self.parents.pop();
            rewritten.insert("aggs".into(), rewritten_sub?);
        }
        out.insert(name.clone(), Value::Object(rewritten));
        Ok(())
    }

    /// The aggregations the engine runs at the top level of a request only, by collectors of
    /// its own; true when `kind` is one of them.
    fn rewrite_top_level(
        &mut self,
        kind: &str,
        params: &Map<String, Value>,
        sub: Option<&Value>,
        at: &Here<'_>,
        out: &mut Map<String, Value>,
    ) -> Result<bool, String> {
        let (name, here, path) = (at.name, at.here, at.path);
        let mapping = self.mapping;
        if points::KINDS.contains(&kind) {
            if !path.is_empty() || sub.is_some() {
                return Err(format!("aggregation `{here}`: the embedded engine runs `{kind}` at the top level of a request, with no sub-aggregations"));
            }
            self.points.push((
                name.clone(),
                points::PointAgg::parse(kind, params, mapping, &here)?,
            ));
            return Ok(true);
        }
        if kind == "nested" {
            if !path.is_empty() {
                return Err(format!("aggregation `{here}`: the embedded engine runs `nested` at the top level of a request"));
            }
            self.nested
                .extend(nested::parse(name, params, sub, self.ctx, here)?);
            return Ok(true);
        }
        if kind == "significant_terms" {
            if !path.is_empty() || sub.is_some() {
                return Err(format!("aggregation `{here}`: the embedded engine runs `significant_terms` at the top level of a request, with no sub-aggregations"));
            }
            let sig = significant::Significant::parse(name, params, mapping, &here)?;
            out.insert(sig.marker(), sig.request());
            self.significant.push(sig);
            return Ok(true);
        }
        if kind == "auto_date_histogram" {
            if !path.is_empty() {
                return Err(format!("aggregation `{here}`: the embedded engine runs `auto_date_histogram` at the top level of a request"));
            }
            let filters_before = self.filters.len();
            let sub = sub
                .map(|s| self.rewrite(s, &here, &[format!("{name}\u{5}")]))
                .transpose()?;
            if self.filters.len() != filters_before {
                return Err(format!("aggregation `{here}`: `filter` and `filters` under an `auto_date_histogram` are not run by the embedded engine"));
            }
            self.autos.push(auto_date::AutoHistogram::parse(
                name, params, mapping, sub, &here,
            )?);
            return Ok(true);
        }
        Ok(false)
    }
}

/// Where an aggregation is in the request: its name, its dotted path for messages, and the
/// names of the bucket aggregations above it.
struct Here<'a> {
    name: &'a String,
    here: &'a str,
    path: &'a [String],
}

fn why_not(kind: &str) -> &'static str {
    match kind {
        "moving_avg" => " (removed in Elasticsearch 8; `moving_fn` runs)",
        "serial_diff" | "extended_stats_bucket" | "percentiles_bucket" | "normalize"
        | "cumulative_cardinality" | "inference" => {
            " (of the pipeline aggregations it runs max_bucket, min_bucket, avg_bucket, sum_bucket, stats_bucket, derivative, cumulative_sum, moving_fn, bucket_script, bucket_selector and bucket_sort)"
        }
        "reverse_nested" => " (it runs under a top-level `nested` aggregation)",
        "significant_text"
        | "sampler"
        | "rare_terms"
        | "weighted_avg"
        | "median_absolute_deviation" => " (tantivy has no such aggregation)",
        _ => "",
    }
}

/// An aggregation's parameters as tantivy takes them, or why they cannot be.
fn params_for(
    kind: &str,
    params: &Map<String, Value>,
    mapping: Option<&Mapping>,
    at: &str,
) -> Result<Map<String, Value>, String> {
    let mut out = params.clone();
    for hint in SHARD_HINTS {
        out.remove(hint);
    }
    if let Some(field) = params.get("field").and_then(Value::as_str) {
        if let Some(f) = mapping.and_then(|m| m.field_or_unseen(field)) {
            // An alias aggregates its target's column.
            if f.name != field {
                out.insert("field".into(), Value::String(f.name.clone()));
            }
            match f.kind {
                FieldType::Text => {
                    return Err(format!(
                        "aggregation `{at}`: field `{field}` is a text field, which Elasticsearch does not aggregate either (aggregate its keyword multi-field, such as `{field}.raw`)"
                    ))
                }
                // Elasticsearch counts a geo_point's values; each point has one latitude.
                FieldType::GeoPoint if kind == "value_count" => {
                    out.insert("field".into(), Value::String(format!("{}.lat", f.name)));
                }
                FieldType::Range(_) => {
                    return Err(format!(
                        "aggregation `{at}`: field `{field}` is a range field, which the embedded engine does not aggregate"
                    ))
                }
                FieldType::GeoPoint => {
                    return Err(format!(
                        "aggregation `{at}`: field `{field}` is a geo_point, which the embedded engine does not aggregate"
                    ))
                }
                // A field no document brought yet is unmapped: it aggregates to nothing.
                FieldType::Keyword
                    if NUMERIC_METRICS.contains(&kind)
                        && mapping.is_some_and(|m| m.field(field).is_some()) =>
                {
                    return Err(format!(
                        "Field [{field}] of type [keyword] is not supported for aggregation [{kind}]"
                    ))
                }
                _ => {}
            }
        }
    }
    if params.contains_key("script") {
        return Err(format!(
            "aggregation `{at}`: scripts are not run by the embedded engine"
        ));
    }
    if kind == "percentiles" {
        percentiles::percentiles_params(&mut out, at)?;
    }
    if kind == "cardinality" {
        // Elasticsearch's memory-for-accuracy knob: tantivy's sketch has one precision (near
        // exact on small sets, about 1% off on large ones), whatever the threshold.
        if let Some(t) = out.remove("precision_threshold") {
            if t.as_f64().is_none_or(|x| x < 0.0) {
                let name = at.rsplit('.').next().unwrap_or(at);
                return Err(format!(
                    "[precisionThreshold] must be greater than or equal to 0. Found [{t}] in [{name}]"
                ));
            }
        }
    }
    if kind == "date_histogram" {
        date_histogram(&mut out, at)?;
    }
    Ok(out)
}

/// Metrics of numbers, which Elasticsearch refuses on a keyword.
const NUMERIC_METRICS: [&str; 7] = [
    "avg",
    "sum",
    "min",
    "max",
    "stats",
    "extended_stats",
    "percentiles",
];

/// A date_histogram tantivy runs: its parameters as tantivy takes them.
fn date_histogram(p: &mut Map<String, Value>, at: &str) -> Result<(), String> {
    match date_histogram::plan(p, at)? {
        date_histogram::Plan::Tantivy(tantivy) => {
            *p = tantivy;
            Ok(())
        }
        date_histogram::Plan::Own(_) => Err(format!(
            "aggregation `{at}`: this date_histogram runs on the engine's own buckets"
        )),
    }
}

mod auto_date;
mod checks;
use checks::{order_by_buckets, unread};
mod bucket_keys;
mod date_histogram;
mod date_range;
mod filters;
mod geo;
mod merge;
mod nested;
mod pipeline;
mod points;
mod reverse;
mod time_series;
pub(crate) use geo::pick_sides;
pub(crate) use points::java_double;

mod percentiles;
mod rounding;
mod shape;
mod shapes;
mod significant;
pub(crate) mod tdigest;

#[cfg(test)]
mod pipeline_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod zone_tests;
