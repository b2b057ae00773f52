"""Every rendering of a result: text, JSON, markdown, step summary."""
