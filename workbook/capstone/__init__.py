"""The capstone: write your own shape of the blog dataset, load it, measure it beside the references, grade it.

``Shape``, ``Collection`` and ``Index`` declare it (see :mod:`workbook.blog.authoring`),
``register`` makes ``workbook.load("blog", name)`` know it, ``grade`` checks it on live facts.
"""

from workbook.blog.authoring import Collection, Index, Shape
from workbook.blog.operations import NEWEST_COMMENTS, PAGE_SIZE, BlogOperations
from workbook.blog.registration import register, unregister
from workbook.blog.workload import HOT_PER_SECOND, hot_operations
from workbook.capstone.grading import ARRAY_LIMIT, NEAR_LIMIT_BYTES, Fact, Grade, grade
from workbook.shapes.spec import json_schema

__all__ = [
    "ARRAY_LIMIT",
    "HOT_PER_SECOND",
    "NEAR_LIMIT_BYTES",
    "NEWEST_COMMENTS",
    "PAGE_SIZE",
    "BlogOperations",
    "Collection",
    "Fact",
    "Grade",
    "Index",
    "Shape",
    "grade",
    "hot_operations",
    "json_schema",
    "register",
    "unregister",
]
