"""``schema.image_features``: a Dataset's Arrow column read at once, the row-by-row path as the fallback."""

import datasets
import numpy as np
import pyarrow as pa
import pytest

from harness.errors import DataError
from harness.run.data import Table
from harness_tasks.retrieval import schema


def fixed_size(matrix: np.ndarray) -> datasets.Dataset:
    """A dataset whose ``image_features`` is a fixed-size list column, as the ikea loader builds it."""
    column = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1])
    return datasets.Dataset(pa.table({"image_features": column}))


def row_path(data) -> np.ndarray:
    """The row-by-row reading (the code before the Arrow path), for comparison."""
    return np.asarray(data.with_format("numpy")["image_features"], dtype=np.float32)


@pytest.fixture
def no_row_path(monkeypatch):
    """Fail if the row-by-row path is taken."""

    def refuse(source, data):
        raise AssertionError("the row-by-row path was taken")

    monkeypatch.setattr(schema, "_row_matrix", refuse)


def test_fixed_size_column_read_from_arrow(no_row_path):
    matrix = np.array([[0.5, 1.0, -2.0], [3.0, 0.0, 0.25], [7.0, 8.0, 9.0], [1.0, 1.0, 1.0]], dtype=np.float32)
    got = schema.image_features("x", fixed_size(matrix))
    assert got.dtype == np.float32 and got.flags.writeable
    np.testing.assert_array_equal(got, matrix)
    viewed = schema.image_features("x", fixed_size(matrix), writable=False)  # the check reads it in place
    assert not viewed.flags.writeable and not viewed.flags.owndata
    np.testing.assert_array_equal(viewed, matrix)


def test_selections_keep_their_rows_and_order(no_row_path):
    matrix = np.arange(40, dtype=np.float32).reshape(10, 4)
    data = fixed_size(matrix)
    np.testing.assert_array_equal(schema.image_features("x", data.select([7, 2, 2, 0])), matrix[[7, 2, 2, 0]])
    np.testing.assert_array_equal(schema.image_features("x", data.select(range(3, 6))), matrix[3:6])


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([[1.5, 2.0], [3.0, 4.25]], [[1.5, 2.0], [3.0, 4.25]]),  # float64 lists
        ([[1, 2], [3, -4]], [[1.0, 2.0], [3.0, -4.0]]),  # int64 lists
        ([[0.1, 1 / 3]], [[np.float32(0.1), np.float32(1 / 3)]]),  # rounded to float32 as NumPy rounds
    ],
)
def test_variable_list_columns_converted_as_numpy_converts(no_row_path, values, expected):
    data = datasets.Dataset.from_dict({"image_features": values})
    got = schema.image_features("x", data)
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.float32))
    assert got.tobytes() == row_path(data).tobytes()


def test_large_list_column_read_from_arrow(no_row_path):
    column = pa.array([[1.0, 2.0], [3.0, 4.5], [0.0, -1.0]], type=pa.large_list(pa.float32()))
    got = schema.image_features("x", datasets.Dataset(pa.table({"image_features": column})).select([2, 0]))
    np.testing.assert_array_equal(got, np.array([[0.0, -1.0], [1.0, 2.0]], dtype=np.float32))


def test_same_bytes_as_the_row_path_on_random_features():
    matrix = np.random.default_rng(3).random((300, 17))
    data = datasets.Dataset.from_dict({"image_features": matrix.tolist()})
    for part in (data, data.select(np.random.default_rng(4).permutation(300)[:100])):
        assert schema.image_features("x", part).tobytes() == row_path(part).tobytes()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([[0.0, 1.0], [2.0, 3.0], [4.0]], r"row 3, field 'image_features': image feature vectors differ in length"),
        ([[0.0, 1.0], [2.0, float("nan")]], r"row 2, field 'image_features': non-finite value nan"),
        ([[1.0, float("inf")], [2.0, 3.0]], r"row 1, field 'image_features': non-finite value inf"),
        ([[], []], r"field 'image_features': image_features must be one non-empty vector per row"),
    ],
)
def test_bad_columns_name_the_row(values, message):
    with pytest.raises(DataError, match=message):
        schema.image_features("x", datasets.Dataset.from_dict({"image_features": values}))


def test_a_null_value_falls_back_to_the_row_path(monkeypatch):
    taken = []
    monkeypatch.setattr(schema, "_row_matrix", lambda source, data: taken.append(len(data)) or np.ones((2, 2)))
    schema.image_features("x", datasets.Dataset.from_dict({"image_features": [[1.0, None], [1.0, 2.0]]}))
    schema.image_features("x", datasets.Dataset.from_dict({"image_features": [None, [1.0, 2.0]]}))
    assert taken == [2, 2]


def test_tables_of_arrays_and_of_lists():
    matrix = np.array([[1.0, 2.0], [3.0, 4.5]], dtype=np.float32)
    for column in (matrix, matrix.tolist()):
        np.testing.assert_array_equal(schema.image_features("x", Table({"image_features": column}, 2)), matrix)
    with pytest.raises(DataError, match=r"row 2, field 'image_features': non-finite value nan"):
        schema.image_features("x", Table({"image_features": [[1.0], [float("nan")]]}, 2))
