//! The conversion table and the arithmetic, apart from the SDK so that they
//! are tested as plain functions.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Length,
    Mass,
    Temperature,
    Data,
    Time,
}

pub const CATEGORIES: [Category; 5] = [
    Category::Length,
    Category::Mass,
    Category::Temperature,
    Category::Data,
    Category::Time,
];

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Length => "length",
            Category::Mass => "mass",
            Category::Temperature => "temperature",
            Category::Data => "data",
            Category::Time => "time",
        }
    }

    /// "the length units are: mm, cm, ...", for error messages.
    fn listing(self) -> String {
        let symbols: Vec<&str> = UNITS
            .iter()
            .filter(|u| u.category == self)
            .map(|u| u.symbol)
            .collect();
        format!("the {} units are: {}", self.name(), symbols.join(", "))
    }
}

/// A unit is an affine map to its category's base unit (m, kg, K, B, s):
/// base = value × scale + offset. Only temperatures have an offset.
pub struct Unit {
    pub symbol: &'static str,
    pub category: Category,
    scale: f64,
    offset: f64,
    /// The lowest value the unit can express: absolute zero for
    /// temperatures. Stated per unit, because converting to kelvin first
    /// would misjudge values at the bound by rounding.
    min: f64,
}

const fn linear(symbol: &'static str, category: Category, scale: f64) -> Unit {
    Unit {
        symbol,
        category,
        scale,
        offset: 0.0,
        min: f64::NEG_INFINITY,
    }
}

use Category::*;

/// Every unit, in the order error messages list them. Factors are the exact
/// definitions: the inch is 25.4 mm, the pound 0.45359237 kg.
pub const UNITS: &[Unit] = &[
    linear("mm", Length, 0.001),
    linear("cm", Length, 0.01),
    linear("m", Length, 1.0),
    linear("km", Length, 1000.0),
    linear("in", Length, 0.0254),
    linear("ft", Length, 0.3048),
    linear("yd", Length, 0.9144),
    linear("mi", Length, 1609.344),
    linear("mg", Mass, 1e-6),
    linear("g", Mass, 0.001),
    linear("kg", Mass, 1.0),
    linear("t", Mass, 1000.0),
    linear("oz", Mass, 0.028349523125),
    linear("lb", Mass, 0.45359237),
    Unit {
        symbol: "C",
        category: Temperature,
        scale: 1.0,
        offset: 273.15,
        min: -273.15,
    },
    Unit {
        symbol: "F",
        category: Temperature,
        scale: 5.0 / 9.0,
        offset: 459.67 * 5.0 / 9.0,
        min: -459.67,
    },
    Unit {
        symbol: "K",
        category: Temperature,
        scale: 1.0,
        offset: 0.0,
        min: 0.0,
    },
    linear("B", Data, 1.0),
    linear("KB", Data, 1e3),
    linear("MB", Data, 1e6),
    linear("GB", Data, 1e9),
    linear("KiB", Data, 1024.0),
    linear("MiB", Data, 1048576.0),
    linear("GiB", Data, 1073741824.0),
    linear("ms", Time, 0.001),
    linear("s", Time, 1.0),
    linear("min", Time, 60.0),
    linear("h", Time, 3600.0),
    linear("d", Time, 86400.0),
];

/// A conversion done: result = value × factor + offset.
#[derive(Debug, PartialEq)]
pub struct Conversion {
    pub result: f64,
    pub category: Category,
    pub factor: f64,
    pub offset: f64,
}

impl Conversion {
    /// The rule used, for the log: "1 km = 0.621371192237 mi", or for
    /// temperatures "F = C × 1.8 + 32".
    pub fn rule(&self, from: &str, to: &str) -> String {
        if self.offset == 0.0 {
            format!("1 {} = {} {}", from, num(self.factor), to)
        } else if self.offset < 0.0 {
            format!(
                "{} = {} × {} - {}",
                to,
                from,
                num(self.factor),
                num(-self.offset)
            )
        } else {
            format!(
                "{} = {} × {} + {}",
                to,
                from,
                num(self.factor),
                num(self.offset)
            )
        }
    }
}

pub fn convert(value: f64, from: &str, to: &str) -> Result<Conversion, String> {
    let (f, t) = (lookup(from), lookup(to));
    let (f, t) = match (f, t) {
        (Some(f), Some(t)) => (f, t),
        (None, other) => return Err(unknown("from", from, other)),
        (Some(f), None) => return Err(unknown("to", to, Some(f))),
    };
    if f.category != t.category {
        return Err(format!(
            "cannot convert {} ({}) to {} ({}); {}",
            f.symbol,
            f.category.name(),
            t.symbol,
            t.category.name(),
            f.category.listing()
        ));
    }
    if value < f.min {
        return Err(format!(
            "{} {} is below absolute zero ({} {})",
            num(value),
            f.symbol,
            num(f.min),
            f.symbol
        ));
    }
    let factor = f.scale / t.scale;
    let offset = (f.offset - t.offset) / t.scale;
    let scaled = value * factor;
    let result = scaled + offset;
    if !result.is_finite() {
        return Err(format!(
            "{} {} in {} is too large for a 64-bit float",
            num(value),
            f.symbol,
            t.symbol
        ));
    }
    Ok(Conversion {
        // Adding an offset can cancel most of the digits (32 F is
        // 17.78 - 17.78 C), leaving noise that is tiny only next to the
        // terms, so precision is counted from the larger term.
        result: round_near(result, scaled.abs().max(offset.abs())),
        category: f.category,
        factor: round(factor),
        offset: round(offset),
    })
}

fn lookup(symbol: &str) -> Option<&'static Unit> {
    UNITS.iter().find(|u| u.symbol == symbol)
}

// unknown explains an unknown unit with the units that would have fitted:
// those of the other unit's category, or all of them.
fn unknown(which: &str, symbol: &str, other: Option<&Unit>) -> String {
    let mut msg = format!("unknown unit {:?} in {:?}", symbol, which);
    // Symbols differ from each other by more than case, so a case-blind
    // match is what was meant ("kb" is KB, "c" is C).
    if let Some(u) = UNITS.iter().find(|u| u.symbol.eq_ignore_ascii_case(symbol)) {
        msg += &format!(" (did you mean {:?}? case matters)", u.symbol);
    }
    match other {
        Some(o) => format!("{}; {}", msg, o.category.listing()),
        None => {
            let all: Vec<String> = CATEGORIES.iter().map(|c| c.listing()).collect();
            format!("{}; {}", msg, all.join("; "))
        }
    }
}

/// Formats x as Rust does, but with an exponent where the plain form would
/// run to hundreds of digits.
pub fn num(x: f64) -> String {
    if x != 0.0 && (x.abs() >= 1e16 || x.abs() < 1e-6) {
        format!("{:e}", x)
    } else {
        format!("{}", x)
    }
}

/// Rounds to 12 significant digits, which hides the binary noise of the
/// arithmetic (212.00000000000003 °F) and keeps far more precision than any
/// of these conversions is used with.
fn round(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        // Also turns -0 into 0.
        return x + 0.0;
    }
    format!("{:.11e}", x).parse().unwrap_or(x)
}

/// Rounds x to the 12th significant digit of magnitude, for a sum whose
/// terms were about that large.
fn round_near(x: f64, magnitude: f64) -> f64 {
    if magnitude == 0.0 || !magnitude.is_finite() {
        return round(x);
    }
    let decimals = 11 - magnitude.log10().floor() as i32;
    if !(0..=300).contains(&decimals) {
        return round(x);
    }
    format!("{:.*}", decimals as usize, x).parse().unwrap_or(x) + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        let cases: &[(f64, &str, &str, f64)] = &[
            (1.0, "km", "m", 1000.0),
            (1.0, "m", "mm", 1000.0),
            (250.0, "cm", "m", 2.5),
            (1.0, "in", "cm", 2.54),
            (1.0, "ft", "in", 12.0),
            (1.0, "yd", "ft", 3.0),
            (1.0, "mi", "km", 1.609344),
            (1.0, "mi", "yd", 1760.0),
            (5.0, "km", "mi", 3.10685596119),
            (1.0, "m", "ft", 3.28083989501),
            (1.0, "kg", "g", 1000.0),
            (1.0, "g", "mg", 1000.0),
            (1.0, "t", "kg", 1000.0),
            (1.0, "lb", "g", 453.59237),
            (1.0, "lb", "oz", 16.0),
            (1.0, "oz", "g", 28.349523125),
            (1.0, "kg", "lb", 2.20462262185),
            (100.0, "C", "F", 212.0),
            (32.0, "F", "C", 0.0),
            (-40.0, "C", "F", -40.0),
            (-40.0, "F", "C", -40.0),
            (98.6, "F", "C", 37.0),
            (0.0, "C", "K", 273.15),
            (0.0, "K", "C", -273.15),
            (0.0, "K", "F", -459.67),
            (-459.67, "F", "K", 0.0),
            (-273.15, "C", "K", 0.0),
            (300.0, "K", "F", 80.33),
            (1.0, "KB", "B", 1000.0),
            (1.0, "KiB", "B", 1024.0),
            (1.0, "GiB", "B", 1073741824.0),
            (1.0, "GB", "MB", 1000.0),
            (1.0, "GiB", "MiB", 1024.0),
            (1.0, "GB", "GiB", 0.931322574615),
            (1536.0, "KiB", "MiB", 1.5),
            (1500.0, "ms", "s", 1.5),
            (1.0, "d", "h", 24.0),
            (1.0, "d", "s", 86400.0),
            (90.0, "min", "h", 1.5),
            (1.0, "h", "ms", 3600000.0),
            (-3.0, "m", "cm", -300.0),
            (0.0, "mi", "mm", 0.0),
            (7.5, "m", "m", 7.5),
            (1e-9, "C", "K", 273.150000001),
            (1e-13, "C", "K", 273.15),
            (1e-9, "mm", "m", 1e-12),
            (1e300, "C", "F", 1.8e300),
            (1e300, "mm", "km", 1e294),
        ];
        for &(value, from, to, want) in cases {
            match convert(value, from, to) {
                Ok(c) => assert_eq!(c.result, want, "{} {} in {}", value, from, to),
                Err(e) => panic!("{} {} in {}: {}", value, from, to, e),
            }
        }
    }

    #[test]
    fn negative_zero_is_zero() {
        let c = convert(-0.0, "m", "km").unwrap();
        assert!(c.result == 0.0 && c.result.is_sign_positive());
    }

    #[test]
    fn categories() {
        let cases = [
            ("mi", Length),
            ("lb", Mass),
            ("K", Temperature),
            ("MiB", Data),
            ("min", Time),
        ];
        for (unit, want) in cases {
            assert_eq!(convert(1.0, unit, unit).unwrap().category, want);
        }
    }

    #[test]
    fn round_trips() {
        for a in UNITS {
            for b in UNITS.iter().filter(|b| b.category == a.category) {
                let there = convert(42.5, a.symbol, b.symbol).unwrap().result;
                let back = convert(there, b.symbol, a.symbol).unwrap().result;
                assert!(
                    (back - 42.5).abs() < 1e-9,
                    "42.5 {} -> {} {} -> {} {}",
                    a.symbol,
                    there,
                    b.symbol,
                    back,
                    a.symbol
                );
            }
        }
    }

    #[test]
    fn table_is_sound() {
        for (i, u) in UNITS.iter().enumerate() {
            assert!(
                UNITS[..i].iter().all(|v| v.symbol != u.symbol),
                "{} twice",
                u.symbol
            );
            // The case-blind hint must point at one unit only.
            let blind = UNITS
                .iter()
                .filter(|v| v.symbol.eq_ignore_ascii_case(u.symbol))
                .count();
            assert_eq!(
                blind, 1,
                "{} differs from another unit only by case",
                u.symbol
            );
            assert!(u.scale > 0.0 && u.scale.is_finite());
        }
        for c in CATEGORIES {
            assert!(
                UNITS.iter().any(|u| u.category == c),
                "{:?} has no units",
                c
            );
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (1.0, "m", "kg", "cannot convert m (length) to kg (mass); the length units are: mm, cm, m, km, in, ft, yd, mi"),
            (1.0, "C", "s", "cannot convert C (temperature) to s (time); the temperature units are: C, F, K"),
            (1.0, "furlong", "m", r#"unknown unit "furlong" in "from"; the length units are: mm, cm, m, km, in, ft, yd, mi"#),
            (1.0, "kg", "stone", r#"unknown unit "stone" in "to"; the mass units are: mg, g, kg, t, oz, lb"#),
            (1.0, "kb", "B", r#"unknown unit "kb" in "from" (did you mean "KB"? case matters); the data units are: B, KB, MB, GB, KiB, MiB, GiB"#),
            (1.0, "x", "y", r#"unknown unit "x" in "from"; the length units are: mm, cm, m, km, in, ft, yd, mi; the mass units are: mg, g, kg, t, oz, lb; the temperature units are: C, F, K; the data units are: B, KB, MB, GB, KiB, MiB, GiB; the time units are: ms, s, min, h, d"#),
            (1.0, "", "m", r#"unknown unit "" in "from"; the length units are: mm, cm, m, km, in, ft, yd, mi"#),
            (-300.0, "C", "K", "-300 C is below absolute zero (-273.15 C)"),
            (-500.0, "F", "C", "-500 F is below absolute zero (-459.67 F)"),
            (-0.001, "K", "K", "-0.001 K is below absolute zero (0 K)"),
            (1e308, "GiB", "B", "1e308 GiB in B is too large for a 64-bit float"),
        ];
        for (value, from, to, want) in cases {
            match convert(value, from, to) {
                Ok(c) => panic!("{} {} in {} = {:?}; want an error", value, from, to, c),
                Err(e) => assert_eq!(e, want),
            }
        }
    }

    #[test]
    fn rules() {
        let rule = |from, to| convert(1.0, from, to).unwrap().rule(from, to);
        assert_eq!(rule("km", "mi"), "1 km = 0.621371192237 mi");
        assert_eq!(rule("GiB", "B"), "1 GiB = 1073741824 B");
        assert_eq!(rule("C", "F"), "F = C × 1.8 + 32");
        assert_eq!(rule("F", "C"), "C = F × 0.555555555556 - 17.7777777778");
        assert_eq!(rule("K", "C"), "C = K × 1 - 273.15");
        assert_eq!(rule("mm", "mi"), "1 mm = 6.21371192237e-7 mi");
    }

    #[test]
    fn rounding() {
        assert_eq!(round(212.00000000000003), 212.0);
        assert_eq!(round(0.1 + 0.2), 0.3);
        assert_eq!(round(123456789012345.0), 123456789012000.0);
        assert_eq!(round(-1.0 / 3.0), -0.333333333333);
        assert_eq!(round(5e-324), 5e-324);
        assert_eq!(round_near(7.1054273576e-15, 17.7), 0.0);
        assert!(round_near(-7.1054273576e-15, 17.7).is_sign_positive());
        assert_eq!(round_near(37.00000000000001, 54.7), 37.0);
        assert_eq!(round_near(1.25e-7, 1e-6), 1.25e-7);
        assert_eq!(round_near(2e20 + 1e5, 2e20), 2e20);
    }
}
