//! A tiny calculator.

pub mod parser;

/// Evaluate an expression such as "1 + 2 * 3".
pub fn evaluate(input: &str) -> Result<i64, String> {
    let tokens = parser::tokenize(input)?;
    parser::eval_tokens(&tokens)
}
