from poolscope.analysis.digest import digest_of


def test_literals_become_placeholders_and_lists_fold():
    a = digest_of("SELECT * FROM t WHERE id IN (1, 2, 3) AND name = 'bob' /* app 7 */")
    b = digest_of('select * from t where id in (4) and name = "al"')
    assert a.text == "SELECT * FROM t WHERE id IN (...) AND name = ?"
    assert a == b


def test_multi_row_inserts_are_one_shape_and_function_calls_keep_their_arguments():
    assert (
        digest_of("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')").text == "INSERT INTO t(a, b) VALUES (...)"
    )
    assert digest_of("SELECT BENCHMARK(5000000, MD5('x'))").text == "SELECT BENCHMARK(?, MD5(?))"


def test_different_shapes_have_different_digests():
    assert (
        digest_of("UPDATE t SET v = 1 WHERE id = 2").digest != digest_of("DELETE FROM t WHERE id = 2").digest
    )


def test_a_statement_cut_inside_a_literal_leaks_no_literal():
    shape = digest_of("INSERT INTO t VALUES ('secret-value-cut-at-2048")
    assert "secret" not in shape.text and shape.text.startswith("INSERT INTO t VALUES (")
