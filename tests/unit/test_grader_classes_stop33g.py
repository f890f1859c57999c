"""SQL dialects, stop 33g (tests/unit/data/classes_stop33g.cases.yaml, issue 21), from held-out batch 57's TC-49: a
query SQLite runs to other rows is also run as DuckDB reads it (DuckDB's strftime(timestamp, format)). 3 of the 7
failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop33g_a_function_with_another_meaning_in_duckdb_is_read_as_duckdb_reads_it_in_both_modes(mode):
    results = _guarded("classes_stop33g.cases.yaml", mode, {})
    assert len(results) >= 7
    by_class = class_counts("classes_stop33g.cases.yaml", results)
    assert by_class[("same_name", "pass")] >= 4 and by_class[("same_name", "fail")] >= 3
