//! convert_units is a wasmcp tool, written with the Rust guest SDK, that
//! converts a value between units of length, mass, temperature, data or
//! time. The table and arithmetic are in units.rs.

mod units;

use serde::{Deserialize, Serialize};
use units::{num, Category};
use wasmcp_guest::{json_tool, log, Level};

#[derive(Deserialize)]
struct Args {
    value: f64,
    from: String,
    to: String,
}

/// The structured result; its fields are the manifest's outputSchema.
#[derive(Debug, PartialEq, Serialize)]
struct Output {
    value: f64,
    from: String,
    to: String,
    result: f64,
    category: Category,
}

fn convert_units(args: Args) -> Result<Output, String> {
    let c = units::convert(args.value, &args.from, &args.to)?;
    log(
        Level::Info,
        &format!(
            "{} {} = {} {}, using {}",
            num(args.value),
            args.from,
            num(c.result),
            args.to,
            c.rule(&args.from, &args.to)
        ),
    );
    Ok(Output {
        value: args.value,
        from: args.from,
        to: args.to,
        result: c.result,
        category: c.category,
    })
}

fn main() {
    wasmcp_guest::main(&[json_tool("convert_units", convert_units)]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    // call runs the tool through the SDK as the host would and returns the
    // exit status with stdout or stderr.
    fn call(args: Value) -> (i32, String) {
        let tools = [json_tool("convert_units", convert_units)];
        let argv = ["convert_units".to_string(), "convert_units".to_string()];
        let stdin = args.to_string();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = wasmcp_guest::run(&argv, &mut stdin.as_bytes(), &mut out, &mut err, &tools);
        let text = if code == 0 { out } else { err };
        (code, String::from_utf8(text).unwrap())
    }

    #[test]
    fn result_object() {
        let (code, out) = call(json!({"value": 5, "from": "km", "to": "mi"}));
        assert_eq!(code, 0, "{}", out);
        let got: Value = serde_json::from_str(&out).unwrap();
        let want = json!({"value": 5.0, "from": "km", "to": "mi", "result": 3.10685596119, "category": "length"});
        assert_eq!(got, want);
    }

    #[test]
    fn errors_exit_1_with_one_line() {
        let (code, err) = call(json!({"value": 1, "from": "m", "to": "kg"}));
        assert_eq!(code, 1);
        assert!(
            err.starts_with("cannot convert m (length) to kg (mass)"),
            "{}",
            err
        );
        assert_eq!(err.lines().count(), 1, "{}", err);
    }

    // The manifest is written by hand; these checks keep it in step with
    // the code.
    #[test]
    fn manifest() {
        let m: Value = serde_json::from_str(include_str!("../manifest.json")).unwrap();
        let tool = &m["tools"][0];
        assert_eq!(tool["name"], "convert_units");
        assert_eq!(tool["output"], "json");

        // A model learns the symbols from the description alone.
        let description = tool["description"].as_str().unwrap();
        let words: Vec<&str> = description
            .split(|c: char| !c.is_ascii_alphanumeric())
            .collect();
        for u in units::UNITS {
            assert!(
                words.contains(&u.symbol),
                "the description lacks {}",
                u.symbol
            );
        }

        let schema = &tool["outputSchema"];
        let categories: Vec<Value> = units::CATEGORIES.iter().map(|c| json!(c.name())).collect();
        assert_eq!(schema["properties"]["category"]["enum"], json!(categories));
        let (_, out) = call(json!({"value": 1, "from": "h", "to": "min"}));
        let out: Value = serde_json::from_str(&out).unwrap();
        let mut fields: Vec<&String> = out.as_object().unwrap().keys().collect();
        let mut required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        fields.sort();
        required.sort_unstable();
        assert_eq!(fields, required);
    }
}
