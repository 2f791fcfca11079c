//! Keeps `openapi.yaml` true to the server: the endpoints registered are exactly the ones
//! documented, and every response any test receives is documented with its status, its media
//! type and a schema its body satisfies.

use std::collections::BTreeSet;

use actix_web::http::{Method, header};
use serde_json::{Value, json};

use crate::helpers::{SPEC, TestResponse};

/// The documented path template that a request path falls under, in the server's own order.
fn template_for(path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    kuryr::api::endpoints()
        .into_iter()
        .map(|e| e.path)
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(part, segment)| part.starts_with('{') || part == segment)
        })
}

/// Follows a local `$ref` of the spec.
fn resolve(value: &Value) -> &Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.strip_prefix('#').expect("local reference");
            resolve(
                SPEC.pointer(pointer)
                    .unwrap_or_else(|| panic!("dangling $ref {reference}")),
            )
        }
        None => value,
    }
}

pub fn check_response(method: &Method, path: &str, response: &TestResponse) {
    let content_type = response
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_owned();
    // The pages a person opens from a mail answer in HTML even on error; the API never does.
    let page = content_type == "text/html" && !path.starts_with("/api/");
    if !response.status.is_success() && !response.status.is_redirection() && !page {
        assert_eq!(
            content_type, "application/problem+json",
            "{method} {path} answered {} without a problem document",
            response.status
        );
    }
    let Some(template) = template_for(path) else {
        // The web client's pages, answered in HTML (or a redirect, or its stylesheet and
        // script), are no part of the API's description.
        let web = content_type.starts_with("text/") || response.status.is_redirection();
        if !path.starts_with("/api/") && web {
            return;
        }
        // A URL outside the API: only the generic 404 problem applies.
        assert_eq!(response.status.as_u16(), 404, "{method} {path}");
        return;
    };
    if method == Method::OPTIONS {
        // Every resource answers OPTIONS (CORS preflights), outside the spec's operations.
        assert_eq!(response.status.as_u16(), 204, "{method} {template}");
        assert!(response.body.is_null(), "{method} {template} has a body");
        return;
    }
    let operation = &SPEC["paths"][template][method.as_str().to_lowercase()];
    if operation.is_null() {
        assert_eq!(
            response.status.as_u16(),
            405,
            "{method} {template} is not documented"
        );
        return;
    }
    let status = response.status.as_u16().to_string();
    let explicit = &operation["responses"][&status];
    let documented = if explicit.is_null() && !response.status.is_success() {
        // An error no response names is the operation's `default`: a problem document.
        resolve(&operation["responses"]["default"])
    } else {
        resolve(explicit)
    };
    assert!(
        !documented.is_null(),
        "{method} {template} answered {status}, which openapi.yaml does not document: {}",
        response.body
    );
    let content = &documented["content"];
    if content.is_null() {
        assert!(
            response.body.is_null(),
            "{method} {template} {status} has an undocumented body"
        );
        return;
    }
    let media = &content[&content_type];
    assert!(
        !media.is_null(),
        "{method} {template} {status} answered with {content_type}, which is not documented"
    );
    // The schema of an event stream describes each of its events, as its fields read.
    let instances = if content_type == "text/event-stream" {
        server_sent_events(response.body.as_str().unwrap_or_default())
    } else if content_type == "application/yaml" {
        let text = response.body.as_str().expect("YAML text");
        vec![serde_yaml_ng::from_str(text).expect("the YAML reads")]
    } else {
        vec![response.body.clone()]
    };
    for instance in &instances {
        assert_matches(
            &media["schema"],
            instance,
            &format!("{method} {template} {status}"),
        );
        if content_type == "text/event-stream" {
            let data: Value = serde_json::from_str(instance["data"].as_str().unwrap())
                .expect("an event's data is JSON");
            assert_matches(
                &media["x-event-schema"],
                &data,
                &format!("{method} {template} {status}"),
            );
        }
    }
}

/// The events of a Server-Sent Events text, as a client reads them: `id`, `event`, `data`.
fn server_sent_events(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut event = serde_json::Map::new();
            for line in block.lines().filter(|line| !line.starts_with(':')) {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "retry" => event.insert(field.into(), json!(value.parse::<u64>().ok()?)),
                    _ => event.insert(field.into(), json!(value)),
                };
            }
            event.contains_key("data").then_some(Value::Object(event))
        })
        .collect()
}

fn assert_matches(schema: &Value, instance: &Value, what: &str) {
    let mut schema = schema.clone();
    // Make the component schemas reachable from the response schema's own root.
    schema
        .as_object_mut()
        .expect("a schema object")
        .insert("components".into(), SPEC["components"].clone());
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match openapi.yaml:\n{}\nbody: {instance}",
        errors.join("\n"),
    );
}

#[test]
fn every_endpoint_is_documented_and_every_documented_path_exists() {
    let registered: BTreeSet<(String, String)> = kuryr::api::endpoints()
        .into_iter()
        .map(|e| (e.method.as_str().to_lowercase(), e.path.to_owned()))
        .collect();
    let mut documented = BTreeSet::new();
    for (path, item) in SPEC["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                documented.insert((method.clone(), path.clone()));
            }
        }
    }
    let undocumented: Vec<_> = registered.difference(&documented).collect();
    let missing: Vec<_> = documented.difference(&registered).collect();
    assert!(
        undocumented.is_empty(),
        "endpoints missing from openapi.yaml: {undocumented:?}"
    );
    assert!(
        missing.is_empty(),
        "openapi.yaml documents endpoints the server lacks: {missing:?}"
    );
}

#[test]
fn every_operation_documents_its_errors_as_problems() {
    for (path, item) in SPEC["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            // An operation without `security` of its own has the document's.
            if operation.get("security").or(SPEC.get("security")).is_some() {
                assert!(
                    responses.contains_key("401"),
                    "{method} {path}: a secured operation documents 401"
                );
            }
            let in_path = path.contains('{');
            if in_path {
                assert!(
                    responses.contains_key("400"),
                    "{method} {path}: a path parameter can be unreadable, so 400 is documented"
                );
            }
            if operation.get("requestBody").is_some() {
                for status in ["400", "413", "415"] {
                    assert!(
                        responses.contains_key(status),
                        "{method} {path} lacks {status}"
                    );
                }
            }
            // The pages a person opens from a mail may answer in HTML.
            let page = !path.starts_with("/api/") && !path.ends_with("z");
            for (status, response) in responses {
                let response = resolve(response);
                if page && !response["content"]["text/html"].is_null() {
                    continue;
                }
                if status.starts_with('4') || status.starts_with('5') {
                    assert!(
                        !response["content"]["application/problem+json"].is_null(),
                        "{method} {path} {status} is not a problem document"
                    );
                }
            }
        }
    }
}

/// `endpoints()` and the spec say the same of what a token needs: the operation's `bearer`
/// requirement lists the scope (or `login`, which only a login token holds), and its 403
/// documents the refusal.
#[test]
fn every_operation_declares_what_a_token_needs() {
    use kuryr::auth::scopes::Needs;
    for endpoint in kuryr::api::endpoints() {
        let what = format!("{} {}", endpoint.method, endpoint.path);
        let operation = &SPEC["paths"][endpoint.path][endpoint.method.as_str().to_lowercase()];
        let security = operation
            .get("security")
            .unwrap_or(&SPEC["security"])
            .as_array()
            .unwrap_or_else(|| panic!("{what} lists no security"));
        // Mail posted by a provider is signed, not sent with a token.
        if security
            .iter()
            .any(|requirement| requirement.get("inboundSignature").is_some())
        {
            assert!(matches!(endpoint.needs, Needs::Nothing), "{what}");
            assert_eq!(security.len(), 1, "{what}: the signature alone");
            continue;
        }
        let bearer: Vec<&Value> = security
            .iter()
            .filter_map(|requirement| requirement.get("bearer"))
            .collect();
        assert_eq!(bearer.len(), 1, "{what}: one bearer requirement");
        let (roles, refusal) = match endpoint.needs {
            Needs::Nothing => (json!([]), None),
            Needs::Scope(scope) => (json!([scope.as_str()]), Some("missing-scope")),
            Needs::Login => (json!(["login"]), Some("login-token-required")),
        };
        assert_eq!(bearer[0], &roles, "{what}");
        if let Some(slug) = refusal {
            let refused = resolve(&operation["responses"]["403"]);
            let description = refused["description"].as_str().unwrap_or_default();
            assert!(
                description.contains(&format!("`{slug}`")),
                "{what}: its 403 does not document `{slug}`"
            );
        }
    }
    let scopes: Vec<&str> = kuryr::auth::scopes::Scope::ALL
        .iter()
        .map(|scope| scope.as_str())
        .collect();
    assert_eq!(
        SPEC["components"]["schemas"]["Scope"]["enum"],
        json!(scopes)
    );
}

#[test]
fn the_committed_description_is_the_generated_one() {
    let generated = kuryr::api::openapi::YAML.as_str();
    let committed = include_str!("../../openapi.yaml");
    assert!(
        committed == generated,
        "openapi.yaml differs from the description the code generates; \
         run `cargo run -- openapi > openapi.yaml` and commit it"
    );
    assert_eq!(SPEC["openapi"], json!("3.1.0"));
    let served: Value = serde_json::from_str(kuryr::api::openapi::JSON.as_str()).unwrap();
    assert_eq!(served, *SPEC);
}

/// Every `$ref` of the description leads somewhere.
#[test]
fn every_reference_resolves() {
    fn walk(value: &Value, dangling: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    let pointer = reference.trim_start_matches('#');
                    if SPEC.pointer(pointer).is_none() {
                        dangling.push(reference.clone());
                    }
                }
                object.values().for_each(|v| walk(v, dangling));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, dangling)),
            _ => {}
        }
    }
    let mut dangling = Vec::new();
    walk(&SPEC, &mut dangling);
    assert!(dangling.is_empty(), "dangling references: {dangling:?}");
}

/// Every object schema says what it holds: its properties, or what its other properties may be.
/// A bare `type: object` describes nothing a client can type (openapi-typescript makes it
/// `Record<string, never>`, which no object with a member fits), so a client could not send a
/// game's options, nor read the description itself.
#[test]
fn every_object_says_what_it_holds() {
    fn is_object(schema: &serde_json::Map<String, Value>) -> bool {
        match schema.get("type") {
            Some(Value::String(kind)) => kind == "object",
            Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
            _ => false,
        }
    }
    fn walk(value: &Value, at: String, bare: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                if is_object(object)
                    && !object.contains_key("properties")
                    && !object.contains_key("additionalProperties")
                {
                    bare.push(at.clone());
                }
                for (key, v) in object {
                    walk(v, format!("{at}/{key}"), bare);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, format!("{at}/{i}"), bare);
                }
            }
            _ => {}
        }
    }
    let mut bare = Vec::new();
    walk(&SPEC, String::new(), &mut bare);
    assert!(
        bare.is_empty(),
        "objects that say nothing of what they hold:\n{}",
        bare.join("\n")
    );
}

/// Every response of every operation is a Response Object: a description, and content (when
/// there is any) as a map of media types. A `null` in their place is no response at all, and
/// tools that read the description (Schemathesis, generators) fail on it.
#[test]
fn every_response_is_a_response_object() {
    for (path, item) in SPEC["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            for (status, response) in responses {
                let what = format!("{method} {path} {status}");
                let response = resolve(response);
                assert!(
                    response["description"].is_string(),
                    "{what}: no description"
                );
                if let Some(content) = response.get("content") {
                    assert!(content.is_object(), "{what}: content is {content}");
                }
                if let Some(headers) = response.get("headers") {
                    assert!(headers.is_object(), "{what}: headers are {headers}");
                }
            }
        }
    }
}

/// The description gives addresses the pattern the server itself checks them by.
#[test]
fn addresses_are_described_by_the_servers_own_pattern() {
    let pattern = kuryr::mail::address::ADDRESS_PATTERN;
    for schema in ["Registration", "AccountChanges"] {
        let email = &SPEC["components"]["schemas"][schema]["properties"]["email"];
        assert_eq!(email["pattern"], json!(pattern), "{schema}: {email}");
    }
}
