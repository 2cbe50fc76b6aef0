/// A lexical token.
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Number(i64),
    Plus,
    Minus,
    Star,
}

/// Split the input into tokens.
pub fn tokenize(input: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    for word in input.split_whitespace() {
        let token = match word {
            "+" => Token::Plus,
            "-" => Token::Minus,
            "*" => Token::Star,
            _ => Token::Number(word.parse().map_err(|_| format!("bad number {}", word))?),
        };
        tokens.push(token);
    }
    Ok(tokens)
}

/// Evaluate tokens left to right.
pub fn eval_tokens(tokens: &[Token]) -> Result<i64, String> {
    let mut acc = 0;
    let mut op = Token::Plus;
    for token in tokens {
        match token {
            Token::Number(n) => {
                acc = match op {
                    Token::Plus => acc + n,
                    Token::Minus => acc - n,
                    Token::Star => acc * n,
                    _ => return Err("unexpected operator".into()),
                };
            }
            other => op = other.clone(),
        }
    }
    Ok(acc)
}
