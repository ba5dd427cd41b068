"""Which notebook teaches each anti-pattern: one table, so a renamed notebook is one edit."""

from __future__ import annotations

UNBOUNDED_ARRAYS = "unbounded_arrays"
BLOATED_DOCUMENTS = "bloated_documents"
MANY_COLLECTIONS = "many_collections"
UNNECESSARY_INDEXES = "unnecessary_indexes"
SEPARATED_DATA = "separated_data"
CASE_INSENSITIVE_REGEX = "case_insensitive_regex"
LOOKUP_ON_HOT_PATH = "lookup_on_hot_path"

ANTI_PATTERNS: dict[str, str] = {
    UNBOUNDED_ARRAYS: "Unbounded arrays",
    BLOATED_DOCUMENTS: "Bloated documents",
    MANY_COLLECTIONS: "Massive number of collections",
    UNNECESSARY_INDEXES: "Unnecessary indexes",
    SEPARATED_DATA: "Separating data that is read together",
    CASE_INSENSITIVE_REGEX: "Case-insensitive regex without a collation index",
    LOOKUP_ON_HOT_PATH: "$lookup on a hot path",
}
"""Each anti-pattern's key and its name as the course says it, in the order the doctor checks them."""

LESSONS: dict[str, str] = {
    UNBOUNDED_ARRAYS: "04_unbounded_arrays",
    BLOATED_DOCUMENTS: "05_document_size",
    MANY_COLLECTIONS: "11_antipattern_clinic",
    UNNECESSARY_INDEXES: "06_indexes",
    SEPARATED_DATA: "03_read_together",
    CASE_INSENSITIVE_REGEX: "07_case_insensitive_search",
    LOOKUP_ON_HOT_PATH: "02_embed_reference_hybrid",
}
"""The notebook (in ``notebooks/``, without ``.ipynb``) that teaches each anti-pattern."""
