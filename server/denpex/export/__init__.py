"""Diagnoses leaving Denpex as text for people: Markdown (hovers, tickets) and redaction."""
