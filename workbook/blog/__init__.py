"""The capstone's blog dataset, built on like the others: its shapes (three references and the ones
learners declare and register), its operations in each shape, and its workload.

Learners use these through :mod:`workbook.capstone`, which adds the grading; this package never
imports it, so :mod:`workbook.dataset_parts` can register the blog without importing the grader.
"""
