"""Data: choose the table, check the column roles and the missing-value policy, and the set-up.

Loading goes through :func:`privgame.data.inspect_dataset`, which lists every problem with the
file at once (the page shows them all), then :func:`privgame.data.load_dataset` once there is
none. The set-up says what the audit is about: the *release* set-up (the default) audits the
release trained on this table, with the population the attacker knows taken from a holdout of the
table or from a second, uploaded table (:func:`privgame.settings.setups.load_population`); the *paper*
set-up draws D from an evaluation pool with the sizes set here. The chosen dataset and set-up are
kept in ``st.session_state`` (``dataset``, ``setup``, see :data:`pages.SETUP_KEY`) for the Evaluate
page, which makes the same calls as ``python -m privgame run`` (:func:`pages.audit_inputs`). A
public domain the user declares (for PrivBayes' guarantee) is kept under ``public_domain`` with the
fingerprint of the table it was checked on, and declared on that table again at every rerun.
Uploaded bytes are parsed from ``st.file_uploader``'s value, so tests can drive the same path with
``AppTest.file_uploader[0].set_value(...)``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from pages import PAGES, SETUP_KEY, audit_inputs, guarded, keep, plain, show_error, show_problems
from privgame.core.errors import ParameterError, PrivgameError
from privgame.service import (
    BUNDLED_ADULT,
    DEFAULT_HOLDOUT,
    DEFAULT_MAX_BYTES,
    ROLES,
    Column,
    Dataset,
    Domain,
    Inspection,
    Sizes,
    check_sizes,
    declare_domain,
    default_sizes,
    domain_template,
    duplicate_rows,
    inspect_dataset,
    load_dataset,
    load_population,
    parse_domain,
    parse_holdout,
)

UPLOAD_LIMIT_MB = DEFAULT_MAX_BYTES // (1024 * 1024)
UPLOAD = "Upload a CSV or Parquet file"
ADULT = "Use the bundled Adult data"
POLICIES = {
    "drop": "Drop rows with a missing value in a used column",
    "category": "Make missing its own category (rows missing a number are still dropped)",
}
SETUPS = {
    "release": "Release: audit the release made from this table (recommended)",
    "paper": "Paper: the paper's research set-up, D drawn from an evaluation pool",
}
POPULATIONS = {
    "holdout": "Hold back part of this table (it is not released)",
    "table": "Upload a population table (same columns)",
}
DOMAIN_KEY = "public_domain"
ROLES_EDITOR = "roles_editor"
# The last uploaded file and population table, (bytes, name): the uploader forgets them when the
# page is left, and the page must show the table's roles and set-up again when the user comes back.
# (Comments, not docstrings: Streamlit would write a bare string on the page.)
UPLOADED_KEY = "_uploaded"
UPLOADED_POPULATION_KEY = "_uploaded_population"
# The roles the user changed, by file ({content key: {column: role}}), kept across pages too.
KEPT_ROLES_KEY = "_kept_roles"
DOMAIN_EXAMPLE = '{"bounds": {"age": [17, 90]}, "categories": {"race": ["A", "B"]}}'


def _content_key(source: Path | bytes, name: str) -> str:
    """The file's identity: its name and a hash of its bytes (a path for the bundled data)."""
    content = hashlib.blake2b(source).hexdigest() if isinstance(source, bytes) else str(source)
    return hashlib.blake2b(f"{name}\0{content}".encode()).hexdigest()[:20]


def _editor_key(source: Path | bytes, name: str) -> str:
    """The role editor's key: its edits belong to one file, never re-applied to the next one."""
    return f"{ROLES_EDITOR}:{_content_key(source, name)}"


def _remembered(
    kind: str,
    source: Path | bytes,
    name: str,
    roles: Mapping[str, str],
    policy: str,
    compute: Callable[[], Any],
) -> Any:
    """``compute()``, remembered for this session while the file, roles and policy stay the same."""
    content = hashlib.blake2b(source).hexdigest() if isinstance(source, bytes) else str(source)
    key = (kind, name, content, tuple(sorted(roles.items())), policy)
    memo: dict[Any, Any] = st.session_state.setdefault("_data_memo", {})
    if key not in memo:
        if len(memo) > 8:
            memo.clear()
        memo[key] = compute()
    return memo[key]


def _inspect(source: Path | bytes, name: str, roles: Mapping[str, str], policy: str) -> Inspection:
    """Every problem with the file, the roles and the table, listed rather than raised."""
    return _remembered(
        "inspection",
        source,
        name,
        roles,
        policy,
        lambda: inspect_dataset(source, filename=name, roles=dict(roles) or None, missing_policy=policy),  # type: ignore[arg-type]
    )


def _load(source: Path | bytes, name: str, roles: Mapping[str, str], policy: str) -> Dataset:
    """The dataset ready for an audit (call once :func:`_inspect` found no problem)."""
    return _remembered(
        "dataset",
        source,
        name,
        roles,
        policy,
        lambda: load_dataset(source, filename=name, roles=dict(roles) or None, missing_policy=policy),  # type: ignore[arg-type]
    )


def _choose_source() -> tuple[Path | bytes, str] | None:
    keep("data_source", UPLOAD, options=[UPLOAD, ADULT])
    choice = st.radio(
        "Data", [UPLOAD, ADULT], horizontal=True, key="data_source", label_visibility="collapsed"
    )
    if choice == ADULT:
        st.caption(
            "UCI Adult (census income), shipped with privgame: 48,842 rows, 15 columns, the data "
            "of the paper's experiments."
        )
        return BUNDLED_ADULT, BUNDLED_ADULT.name
    upload = st.file_uploader(
        f"CSV (comma, semicolon, tab or pipe separated; may be gzip-compressed) or Parquet, "
        f"up to {UPLOAD_LIMIT_MB} MB",
        type=["csv", "tsv", "txt", "gz", "parquet", "pq"],
        key="upload",
    )
    if upload is None:
        earlier = st.session_state.get(UPLOADED_KEY)
        if earlier is None:
            return None
        st.caption(f"Using {plain(earlier[1])}, uploaded earlier; upload another file to replace it.")
        return earlier
    st.session_state[UPLOADED_KEY] = (upload.getvalue(), upload.name)
    return upload.getvalue(), upload.name


def _bound(value: float) -> str:
    """A bound as people write it: 1,490,400 or 0.25, never 1.4904e+06."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.2f}"


def _domain(col: Column) -> str:
    if col.role == "categorical":
        return f"{len(col.categories or ())} categories"
    if col.role == "continuous" and col.lower is not None and col.upper is not None:
        return f"{_bound(col.lower)} to {_bound(col.upper)}"
    return ""


def _schema_frame(
    base: Inspection, found: Inspection, overrides: Mapping[str, str], kept: Mapping[str, str]
) -> pd.DataFrame:
    """The inferred roles, with the domain and the reason of the roles in force (``found``).

    A column whose changed role does not fit keeps its inferred domain, and its reason says so
    (the problem itself is listed below the table).
    """
    now = {col.name: col for col in found.schema.columns}
    rows = []
    for col in base.schema.columns:
        wanted = overrides.get(col.name, col.role)
        shown = now.get(col.name, col)
        fits = shown.role == wanted
        rows.append(
            {
                "column": col.name,
                "role": kept.get(col.name, col.role),  # the roles changed earlier stay changed
                "type": col.dtype,
                "distinct": col.distinct,
                "missing": col.missing,
                "domain": _domain(shown) if fits else "",
                "why": (shown.reason or "") if fits else f"cannot be {wanted}: see the problem below",
            }
        )
    return pd.DataFrame(rows)


def _pending_roles(base: Inspection, key: str, kept: Mapping[str, str]) -> dict[str, str]:
    """The roles changed (earlier, ``kept``, and in the editor's last interaction), read before
    the editor is drawn."""
    state = st.session_state.get(key)
    edited = state.get("edited_rows", {}) if isinstance(state, Mapping) else {}
    columns = base.schema.columns
    out: dict[str, str] = dict(kept)
    for position, change in edited.items():
        if isinstance(position, int) and 0 <= position < len(columns) and isinstance(change, Mapping):
            role = change.get("role")
            if role in ROLES and role != columns[position].role:
                out[columns[position].name] = str(role)
            elif role == columns[position].role:
                out.pop(columns[position].name, None)  # changed back to the inferred role
    return out


def _role_editor(
    base: Inspection, found: Inspection, overrides: Mapping[str, str], key: str, kept: Mapping[str, str]
) -> dict[str, str]:
    """The schema as an editable table; returns the roles the user changed."""
    frame = _schema_frame(base, found, overrides, kept)
    edited = st.data_editor(
        frame,
        key=key,
        hide_index=True,
        height=min(36 * (len(frame) + 1) + 3, 760),
        width="stretch",
        disabled=[c for c in frame.columns if c != "role"],
        column_config={
            "role": st.column_config.SelectboxColumn(
                "role",
                options=list(ROLES),
                required=True,
                help="categorical: a finite set of values; continuous: ordered numbers; "
                "excluded: not used by the generator nor the attack (identifiers, free text).",
            ),
            "why": st.column_config.TextColumn("why this role", width="large"),
        },
    )
    inferred = {col.name: col.role for col in base.schema.columns}
    return {
        name: role
        for name, role in zip(edited["column"], edited["role"], strict=True)
        if role != inferred[name]
    }


def _sizes(n_rows: int) -> Sizes | None:
    st.markdown(
        "The rows are split into the attacker's **auxiliary data D_aux** and the **evaluation pool "
        "D_eval**; the **target dataset D** is drawn at random from D_eval, and the rest of D_eval are "
        "the reference records the games swap in. This audits a random dataset of |D| rows, not the "
        "release you will publish: use the release set-up for that."
    )
    try:
        base = default_sizes(n_rows)
    except PrivgameError as error:
        show_error(error)
        return None
    cols = st.columns(3)
    keep(f"size_aux_{n_rows}", base.aux, low=1)
    aux = cols[0].number_input("|D_aux| (auxiliary data)", min_value=1, step=100, key=f"size_aux_{n_rows}")
    keep(f"size_eval_{n_rows}", base.eval, low=1)
    eval_ = cols[1].number_input(
        "|D_eval| (evaluation pool)", min_value=1, step=100, key=f"size_eval_{n_rows}"
    )
    keep(f"size_target_{n_rows}", base.target, low=2)
    target = cols[2].number_input("|D| (target dataset)", min_value=2, step=50, key=f"size_target_{n_rows}")
    sizes = Sizes(aux=int(aux), eval=int(eval_), target=int(target))
    try:
        check_sizes(n_rows, sizes)
    except PrivgameError as error:
        show_error(error)
        return None
    st.success(
        f"{n_rows:,} rows: D_aux {sizes.aux:,}, D_eval {sizes.eval:,} (of which D "
        f"{sizes.target:,}, {sizes.eval - sizes.target:,} reference records), "
        f"{n_rows - sizes.aux - sizes.eval:,} unused."
    )
    return sizes


def _population(dataset: Dataset) -> Dataset | None:
    """The uploaded population table, loaded with the data's roles; None (said why) without one."""
    upload = st.file_uploader(
        "Population table: CSV or Parquet with the same columns as the data",
        type=["csv", "tsv", "txt", "gz", "parquet", "pq"],
        key="population_upload",
    )
    if upload is not None:
        st.session_state[UPLOADED_POPULATION_KEY] = (upload.getvalue(), upload.name)
    elif st.session_state.get(UPLOADED_POPULATION_KEY) is not None:
        st.caption(
            f"Using {plain(st.session_state[UPLOADED_POPULATION_KEY][1])}, uploaded earlier; upload "
            "another file to replace it."
        )
    else:
        st.info("Upload the population table, or hold back part of this table instead.")
        return None
    source, upload_name = st.session_state[UPLOADED_POPULATION_KEY]
    key = (
        "population",
        hashlib.blake2b(source).hexdigest(),
        upload_name,
        dataset.fingerprint,
        hashlib.blake2b(repr(dataset.schema.to_dict()).encode()).hexdigest(),
    )
    memo: dict[Any, Any] = st.session_state.setdefault("_data_memo", {})
    if key not in memo:
        try:
            memo[key] = load_population(source, dataset, filename=upload_name)
        except PrivgameError as error:
            show_error(error)
            return None
    return memo[key]


def _release_setup(dataset: Dataset) -> dict[str, Any] | None:
    """The release set-up's controls; the set-up (see :data:`pages.SETUP_KEY`) or None."""
    st.markdown(
        "**D is the data the release is trained on.** By default the attacker knows every other "
        "record of D (the worst case, chosen on the Evaluate page); the paper's weaker attacker "
        "knows other people of the same population (**D_aux**) instead. The rest of the population "
        "are the **reference records**, which the privacy games swap in for a target record. The "
        "population is a part of this table that is held back and not released, or a second table "
        "of the same columns."
    )
    keep("population_source", "holdout", options=list(POPULATIONS))
    source = st.radio(
        "Where the population comes from",
        list(POPULATIONS),
        format_func=POPULATIONS.__getitem__,
        horizontal=True,
        key="population_source",
    )
    setup: dict[str, Any] = {"kind": "release", "population": None, "holdout": None}
    if source == "holdout":
        keep("holdout", str(DEFAULT_HOLDOUT))
        text = st.text_input(
            "Holdout: a share of the rows (such as 0.3) or a number of rows (such as 5000)",
            key="holdout",
            help="These rows play the population: the attacker's data and the reference records. "
            "They are not released; the release is trained on the other rows.",
        )
        try:
            setup["holdout"] = parse_holdout(text)
        except PrivgameError as error:
            show_error(error)
            return None
    else:
        population = _population(dataset)
        if population is None:
            return None
        setup["population"] = population
    cols = st.columns(2)
    keep("aux_rows", None)
    aux = cols[0].number_input(
        "|D_aux|: rows of the population the attacker knows (optional)",
        min_value=1,
        step=100,
        key="aux_rows",
        placeholder="two thirds of the population",
        help="The rest of the population are the reference records.",
    )
    keep("shadow_size", None)
    shadow = cols[1].number_input(
        "Rows of each shadow dataset (optional)",
        min_value=2,
        step=100,
        key="shadow_size",
        placeholder="|D| rows",
        help="The attacker's shadow datasets are drawn from D_aux. By default they have |D| rows, "
        "drawn with replacement when D_aux is smaller; a size here is drawn without replacement.",
    )
    setup["aux_rows"] = None if aux is None else int(aux)
    setup["shadow_size"] = None if shadow is None else int(shadow)
    try:
        # Which rows are held back depends on the run's seed (Evaluate page); the counts do not.
        inputs = audit_inputs(dataset, setup, seed=0)
    except PrivgameError as error:
        show_error(error)
        return None
    sizes, facts = inputs.sizes, inputs.setup
    shadow_rows = sizes["target"] if facts.shadow_size is None else facts.shadow_size
    how = "with replacement" if facts.shadow_replace else "without replacement"
    where = (
        f"{facts.population_rows:,} rows of the population table"
        if facts.population == "table"
        else f"{facts.population_rows:,} rows held back from this table"
    )
    st.success(
        f"D: {sizes['target']:,} rows (the release's training data). Population: {where}; the "
        f"attacker knows {sizes['aux']:,} of them (D_aux) and {sizes['eval'] - sizes['target']:,} are "
        f"reference records. Shadow datasets: {shadow_rows:,} rows from D_aux, drawn {how}."
    )
    if setup["population"] is not None:
        st.caption("Population table: " + plain(setup["population"].source_name))
    elif facts.population == "holdout":
        st.caption("Which rows are held back is drawn with the run's seed, chosen on the Evaluate page.")
    return setup


def _setup(dataset: Dataset) -> dict[str, Any] | None:
    """The set-up section; the chosen set-up (see :data:`pages.SETUP_KEY`) or None."""
    st.subheader("Set-up")
    keep("setup_kind", "release", options=list(SETUPS))
    kind = st.radio(
        "What the audit is about",
        list(SETUPS),
        format_func=SETUPS.__getitem__,
        key="setup_kind",
    )
    if kind == "paper":
        sizes = _sizes(len(dataset.table))
        return None if sizes is None else {"kind": "paper", "sizes": sizes}
    return _release_setup(dataset)


def _domain_input(dataset: Dataset) -> tuple[bool, str | bytes]:
    """The input widgets of the public-domain expander: (Apply clicked, the JSON)."""
    st.markdown(
        "PrivBayes is differentially private only if every column's domain (its categories, or "
        "its lower and upper bounds) is public knowledge: a domain read off the private rows "
        "reveals them (the oldest person's age, a category only one record has). Declare it "
        "here as JSON, from public sources such as a code book or a survey form."
    )
    st.download_button(
        "Download a template",
        data=domain_template(dataset.schema),
        file_name=f"{Path(dataset.source_name).name.split('.')[0] or 'data'}-domain.json",
        mime="application/json",
        key="domain_template",
    )
    st.caption(
        "The template is **read off this table's rows, so it is not public**: replace every "
        "bound and category list with what is publicly known before you apply it. Numbers outside "
        "declared bounds are allowed (Baynet and PrivBayes clip them); every value of a "
        "categorical column must be among its declared categories."
    )
    upload = st.file_uploader(
        "Domain file (JSON); used instead of the text below when given", type=["json"], key="domain_upload"
    )
    text = st.text_area("…or paste the domain", key="domain_text", placeholder=DOMAIN_EXAMPLE, height=150)
    apply = st.button("Apply", key="domain_apply", type="primary")
    return apply, upload.getvalue() if upload is not None else text


def _public_domain(dataset: Dataset) -> Dataset:
    """The public-domain expander; returns ``dataset`` with the declared domain, if there is one."""
    stored = st.session_state.get(DOMAIN_KEY)
    if stored and stored["fingerprint"] != dataset.fingerprint:
        st.session_state.pop(DOMAIN_KEY)  # declared for another table
    with st.expander("Public domain (for PrivBayes' guarantee)"):
        apply, source = _domain_input(dataset)
        if apply:
            st.session_state.pop(DOMAIN_KEY, None)
            try:
                if not source.strip():
                    raise ParameterError(
                        "There is no domain to apply: upload a JSON file or paste one, e.g. " + DOMAIN_EXAMPLE
                    )
                domain = parse_domain(source)
                declare_domain(dataset, domain)
            except PrivgameError as error:
                show_error(error)
                st.caption("No domain is declared: every column's domain is read off the data.")
                return dataset
            st.session_state[DOMAIN_KEY] = {"fingerprint": dataset.fingerprint, "domain": domain}
        stored = st.session_state.get(DOMAIN_KEY)
        if not stored:
            return dataset
        declared_domain: Domain = stored["domain"]
        try:
            declared = declare_domain(dataset, declared_domain)
        except PrivgameError as error:
            # The roles changed since the domain was applied and it no longer fits.
            st.session_state.pop(DOMAIN_KEY, None)
            show_error(error)
            st.caption("The declared domain was removed; correct it and apply it again.")
            return dataset
        # Drawn after Apply was handled, so it shows as soon as a domain is declared.
        if st.button("Remove the declared domain", key="domain_remove"):
            st.session_state.pop(DOMAIN_KEY, None)
            st.caption("No domain is declared: every column's domain is read off the data.")
            return dataset
        used = declared.schema.used
        public = [plain(c.name) for c in used if c.domain_public]
        rest = [plain(c.name) for c in used if not c.domain_public]
        st.success(
            f"Public domain declared for {len(public)} of {len(used)} used columns: {', '.join(public)}."
        )
        if rest:
            st.warning(
                f"Still read off the data: {', '.join(rest)}. PrivBayes' guarantee holds only once "
                "every used column has a public domain."
            )
        else:
            st.success("Every used column has a public domain, so PrivBayes' guarantee can hold.")
        return declared


def body() -> None:
    st.title("Data")
    st.markdown(
        "Choose the table the synthetic data will be made from. privgame infers a role for every "
        "column; check them, and what the audit is about: the release made from this table, or the "
        "paper's research set-up."
    )
    source = _choose_source()
    current = st.session_state.get("dataset")
    if source is None:
        if current is not None:
            st.info(f"Using {plain(current.source_name)} ({len(current.table):,} rows), chosen earlier.")
        return
    data, name = source
    keep("missing_policy", "drop", options=list(POLICIES))
    policy = st.radio(
        "Missing values",
        list(POLICIES),
        format_func=POLICIES.__getitem__,
        key="missing_policy",
        horizontal=True,
    )
    try:
        base = _inspect(data, name, {}, policy)
    except PrivgameError as error:
        st.session_state.pop("dataset", None)
        show_error(error)
        return

    st.subheader(f"Columns of {plain(name)}")
    st.caption("Change a column's role in the role column; the table is checked again at once.")
    key = _editor_key(data, name)
    kept_roles: dict[str, dict[str, str]] = st.session_state.setdefault(KEPT_ROLES_KEY, {})
    # The roles changed earlier are the editor's starting point when it is drawn afresh (the first
    # time, or when the user comes back to the page, Streamlit having forgotten its edits); while
    # it lives, its edits are relative to that starting point.
    if key not in st.session_state:
        st.session_state[f"_start:{key}"] = dict(kept_roles.get(_content_key(data, name), {}))
    kept = st.session_state.get(f"_start:{key}", {})
    pending = _pending_roles(base, key, kept)
    found = _inspect(data, name, pending, policy) if pending else base
    overrides = _role_editor(base, found, pending, key, kept)
    if overrides != pending:  # the editor's state belonged to another table
        found = _inspect(data, name, overrides, policy) if overrides else base
    kept_roles[_content_key(data, name)] = dict(overrides)
    if overrides:
        st.caption("Changed roles: " + ", ".join(plain(f"{k} → {v}") for k, v in overrides.items()))
    prepared = found.prepared
    st.markdown(
        f"**{len(found.table):,} rows** read; **{prepared.dropped_rows:,} rows dropped** by the "
        f"missing-value policy; **{len(prepared.table):,} rows** kept; "
        f"{len(found.schema.used)} of {len(found.schema.columns)} columns used."
    )
    for note in prepared.notes:
        st.caption(plain(note))
    for warning in found.warnings:  # as python -m privgame schema prints them
        st.warning(plain(warning[0].upper() + warning[1:]))
    repeated = duplicate_rows(found)
    if repeated:
        st.info(
            f"Exact duplicates: {repeated:,} rows repeat an earlier row on the used columns. A record "
            "with a twin is less unique than a membership attack assumes, so its risk reads lower; "
            "the results say which audited records have one (the command line's "
            "`run --drop-duplicates` keeps one copy of each)."
        )
    if found.problems:
        st.session_state.pop("dataset", None)
        show_problems(f"{plain(name)} cannot be used for an audit yet:", found.problems)
        return

    dataset = _load(data, name, overrides, policy)
    with st.expander("First rows of the prepared table"):
        st.dataframe(dataset.table.head(20), hide_index=True)
    dataset = _public_domain(dataset)
    setup = _setup(dataset)
    if setup is None:
        st.session_state.pop("dataset", None)
        st.session_state.pop(SETUP_KEY, None)
        return
    st.session_state["dataset"] = dataset
    st.session_state[SETUP_KEY] = setup
    st.page_link(
        PAGES["evaluate"],
        label="Next: choose the generator and launch the audit",
        icon=":material/play_arrow:",
    )


guarded(body)
