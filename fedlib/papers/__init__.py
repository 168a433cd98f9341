"""The papers' published numbers, as data, so chapters print them beside ours and never type them."""
