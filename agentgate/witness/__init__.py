"""Skip witnesses: what each test really depended on, and the gate that may skip it."""
