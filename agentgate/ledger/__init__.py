"""The freeze ledger: records, rules, node ids, its commands."""
