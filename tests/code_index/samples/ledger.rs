use std::collections::HashMap;

/// A ledger of account balances in cents.
#[derive(Debug, Default)]
pub struct Ledger {
    balances: HashMap<String, i64>,
}

impl Ledger {
    /// Moves `cents` from one account to another, refusing overdrafts.
    pub fn transfer(&mut self, from: &str, to: &str, cents: i64) -> Result<(), String> {
        let available = *self.balances.get(from).unwrap_or(&0);
        if available < cents {
            return Err(format!("{from} has {available} cents, needs {cents}"));
        }
        *self.balances.entry(from.to_string()).or_default() -= cents;
        *self.balances.entry(to.to_string()).or_default() += cents;
        Ok(())
    }

    pub fn balance(&self, account: &str) -> i64 {
        self.balances.get(account).copied().unwrap_or(0)
    }
}

pub fn parse_cents(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let fraction = format!("{fraction:0<2}");
    Some(whole.parse::<i64>().ok()? * 100 + fraction[..2].parse::<i64>().ok()?)
}
