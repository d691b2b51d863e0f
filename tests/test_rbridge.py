"""dpstats.rbridge for Python users (rpy2): data frames both ways, results as R lists,
data sets from R packages, and the entry point the R package calls."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpstats import rbridge as rb

pytestmark = pytest.mark.r


@pytest.fixture(scope="module")
def ro(rpy2_robjects):
    return rpy2_robjects


def test_r_frame_roundtrip_keeps_types_levels_and_na(ro):
    df = rb.to_pandas(
        "data.frame(x = c(1.5, NA, 3), i = c(1L, NA, 3L), j = 1:3, t = c(TRUE, NA, FALSE), "
        'g = factor(c("b", "a", NA), levels = c("b", "a", "c")), '
        'o = factor(c("lo", "hi", "lo"), levels = c("lo", "hi"), ordered = TRUE), '
        's = c("z", NA, "a"), stringsAsFactors = FALSE)'
    )
    assert [str(t) for t in df.dtypes] == [
        "float64",
        "float64",
        "int64",
        "boolean",
        "category",
        "category",
        "str",
    ]
    assert df["g"].cat.categories.tolist() == ["b", "a", "c"] and df["o"].cat.ordered
    assert (
        np.isnan(df.loc[1, "x"])
        and np.isnan(df.loc[1, "i"])
        and df["s"].isna().tolist() == [False, True, False]
    )
    back = rb.to_pandas(rb.to_r(df))
    pd.testing.assert_frame_equal(back, df)
    ro.globalenv["rt"] = rb.to_r(df)
    assert list(ro.r("sapply(rt, function(x) class(x)[1])")) == [
        "numeric",
        "numeric",
        "integer",
        "logical",
        "factor",
        "ordered",
        "character",
    ]
    assert list(ro.r("levels(rt$g)")) == ["b", "a", "c"]
    assert int(ro.r("sum(is.na(rt))")[0]) == 5


def test_result_to_r_has_s3_class_and_content(ro):
    import dpstats as dp

    data = dp.datasets.fan_lv(n=80, d=20, random_state=0)
    fit = dp.dp_sis("y ~ .", data=data, eps=2.0, k=3, bounds=(-4, 4), random_state=0, oc_trials=0)
    rfit = rb.result_to_r(fit)
    assert list(ro.r["class"](rfit)) == ["dp_sis", "dp_result"]
    ro.globalenv["rfit"] = rfit
    assert sorted(ro.r("rfit$outputs$selected")) == sorted(fit.selected)
    assert int(ro.r("sum(rfit$coef)")[0]) == 3
    assert float(ro.r("rfit$privacy$eps")[0]) == 2.0


def test_load_r_datasets():
    bc = rb.load_r_dataset("BreastCancer", package="mlbench")
    assert bc.shape == (699, 11)
    assert bc["Class"].cat.categories.tolist() == ["benign", "malignant"]
    assert bc["Cl.thickness"].cat.ordered
    al = rb.load_r_dataset("ALL", package="ALL")
    assert al.shape == (128, 21 + 12625)
    assert "1000_at" in al.columns and al["BT"].dtype == "category"
    with pytest.raises(rb.DataError, match="no data set"):
        rb.load_r_dataset("NoSuchData", package="mlbench")


def test_call_from_r_returns_classed_errors_and_results():
    t = rb.transport_from_frame(
        pd.DataFrame(
            {
                "y": [1.0, 2, 3, 4, 5, 6],
                "a": [1.0, 0, 1, 0, 1, 1],
                "b": [0.0, 1, 1, 0, 0, 1],
                "s": list("uvuvuv"),
            }
        )
    )
    bad = rb.call_from_r("dp_sis", kwargs={"formula": "s ~ a + b", "eps": 1.0}, frames={"data": t})
    assert not bad.ok and bad.error_classes == ["dpstats_data_error", "dpstats_error"]
    assert "response 's'" in bad.error_message
    missing = rb.call_from_r("dp_nothing", kwargs={})
    assert not missing.ok and missing.error_classes[-1] == "dpstats_error"
    good = rb.call_from_r(
        "dp_sis",
        kwargs={"formula": "y ~ a + b", "eps": 1.0, "k": 1.0, "random_state": 1, "oc_trials": 0.0},
        frames={"data": t},
    )
    assert good.ok, good.error_message
    payload = json.loads(good.json)
    assert payload["class"] == ["dp_sis", "dp_result"] and payload["result"]["call"]["k"] == 1
    assert any(w[0] == "dpstats_non_private_warning" for w in good.warnings)


def test_unknown_or_missing_argument_is_a_classed_argument_error():
    from dpstats.rbridge import call_from_r

    t = {
        "names": ["y", "a", "b"],
        "n": 4,
        "kinds": ["double"] * 3,
        "numeric": [1.0, 2, 3, 4, 1, 0, 1, 0, 3, 1, 4, 1],
        "codes": [],
        "levels": [],
    }
    out = call_from_r("dp_sis", kwargs={"formula": "y ~ .", "eps": 1, "bound": [-1, 1]}, frames={"data": t})
    assert out.error_classes == ["dpstats_argument_error", "dpstats_error"]
    assert "did you mean 'bounds'" in out.error_message
    out = call_from_r("dp_sis", kwargs={"formula": "y ~ ."}, frames={"data": t})
    assert out.error_classes[0] == "dpstats_argument_error" and "'eps'" in out.error_message


def test_python_users_keep_python_words_that_r_rewords():
    """The R package rewords messages for R users (r_wrapper/R/bridge.R, .r_words; test-r-words.R);
    Python users keep Python's: a dict, a list, (lo, hi), a pandas.CategoricalDtype."""
    import dpstats as dp
    from dpstats.errors import PrivacyParameterError

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"y": rng.normal(size=40), "x": rng.normal(size=40), "city": ["Leeds", "York"] * 20})
    with pytest.raises(
        PrivacyParameterError,
        match=r"levels must be a dict such as \{'city': \['Leeds', 'York'\]\}, got list",
    ):
        dp.dp_lm("y ~ x + city", df, eps=1.0, bounds=(-5, 5), levels=["Leeds", "York"])
    with pytest.raises(PrivacyParameterError, match=r"must be a pair \(lo, hi\) of numbers"):
        dp.dp_lm("y ~ x", df, eps=1.0, bounds={"y": (-5, 5), "x": "a"})
    with pytest.raises(PrivacyParameterError, match="pandas.CategoricalDtype"):
        dp.dp_lm("y ~ x + city", df, eps=1.0, bounds={"y": (-5, 5), "x": (-5, 5)}, strict=True)


def test_select_args_that_is_no_mapping_is_refused_by_name():
    """select_args = c(1, 2) from R (a list in Python) was a raw TypeError from dict(); it is a
    privacy-parameter error naming the argument, before any data is read."""
    import dpstats as dp
    from dpstats.errors import PrivacyParameterError

    df = pd.DataFrame({"y": [1.0, 2, 3, 4], "x": [0.0, 1, 0, 1]})
    with pytest.raises(PrivacyParameterError, match=r"select_args must be a dict .*got list"):
        dp.dp_select_infer("y ~ x", df, eps=1.0, delta=1e-6, k=1, bounds=(-5, 5), select_args=[1, 2])
    out = rb.call_from_r(
        "dp_select_infer",
        kwargs={
            "formula": "y ~ x",
            "eps": 1.0,
            "delta": 1e-6,
            "k": 1.0,
            "bounds": [-5.0, 5.0],
            "select_args": [1.0],
        },
        frames={"data": rb.transport_from_frame(df)},
    )
    assert out.error_classes[0] == "dpstats_privacy_parameter_error"
    assert out.error_message.startswith("select_args must be")
