"""privgame dashboard: ``streamlit run app.py``.

This script is the home page and the router: it lists every page (``pages/``) with
``st.navigation`` and runs the one the user opened. Pages only build a run spec, start a run and
read the run store; all the work is done by :mod:`privgame`, the same code the command line uses.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from pages import PAGES, guarded, plain, runs, runs_root, warm_up, when


def home() -> None:
    """What the tool does, the latest runs, and where to start."""
    st.title("privgame")
    st.markdown(
        "**Audit, record by record, the membership-inference risk of a synthetic data "
        "release.**\n\n"
        "A data owner about to publish synthetic data made from a table *D* wants to know which "
        "people in *D* an attacker could detect. privgame trains the TAPAS membership-inference "
        "attack against the synthetic data generator for each chosen *target record* and measures "
        "its success (ROC AUC: 0.5 is a guess, 1 is certain) in two privacy games:\n\n"
        "- the **model-seeded game** keeps *D* fixed and varies only the generator's seed, so it "
        "measures the risk of this record *in this dataset* — the risk of the release you are "
        "about to make;\n"
        "- the **traditional game** draws a fresh dataset around the record each time, so it "
        "averages the risk over datasets the record could have been in.\n\n"
        "A record is **at risk** when the whole 95% interval of its model-seeded risk lies above the "
        "high-risk threshold *t*, **not at risk** when it lies at or below *t*, **undecided** in "
        "between, and its **attack failed** when the interval lies at or below 0.5 (never read as "
        "safe). The paper's **miss rate** is the share of records whose risk is above *t* that the "
        "traditional game would call low-risk, and the **RMSD** says how far the two estimates are "
        "apart overall.\n\n"
        "A release is judged against the worst case by default: an attacker who knows every other "
        "record of *D* (leave-one-out), in the model-seeded game. The paper's weaker attacker, who "
        "knows only other people of the population, plays both games and compares them."
    )

    st.subheader("Where to start")
    cols = st.columns(4)
    with cols[0]:
        st.page_link(PAGES["data"], label="1. Choose the data", icon=":material/table_view:")
        st.caption(
            "Upload a CSV or Parquet table, or use the bundled Adult data; check the roles and say "
            "where the population the attacker knows comes from."
        )
    with cols[1]:
        st.page_link(PAGES["evaluate"], label="2. Evaluate the records", icon=":material/play_arrow:")
        st.caption(
            "Pick the generator and the records (the most outlying and a random sample), see the "
            "cost, and launch the run."
        )
    with cols[2]:
        st.page_link(PAGES["results"], label="3. Read the results", icon=":material/bar_chart:")
        st.caption("What was audited, the share of D at risk, every record's risk, the miss rate.")
    with cols[3]:
        st.page_link(PAGES["release"], label="4. Make the release", icon=":material/publish:")
        st.caption("The audited generator trained on the audited data, with its release card.")

    st.subheader("Latest runs")
    latest = runs()[:5]
    if not latest:
        st.info(f"No runs yet in {plain(runs_root().resolve())}. Start with the Data page.")
        return
    for info in latest:
        line = st.columns([6, 2, 2])
        line[0].markdown(f"`{info.run_id}`  \n{plain(info.data_name)} · {plain(info.generator)}")
        progress = f" ({info.progress:.0%})" if info.state in ("queued", "running") else ""
        line[1].markdown(f"**{info.state}**{progress}  \n{when(info.created)}")
        with line[2]:
            if info.state == "done":
                st.page_link(
                    PAGES["results"],
                    label="Results",
                    icon=":material/bar_chart:",
                    query_params={"run": info.run_id},
                )
            else:
                st.page_link(
                    PAGES["runs"],
                    label="Runs",
                    icon=":material/folder_open:",
                    query_params={"run": info.run_id},
                )
    st.caption(f"Runs are stored in {plain(runs_root().resolve())}.")
    st.page_link(PAGES["runs"], label="Every run", icon=":material/folder_open:")


def _home_page() -> None:
    guarded(home)


# A local image: a Material icon as the favicon would make every browser fetch it from Google's
# servers, a request that leaves this machine (the navigation icons are in Streamlit's own font).
ICON = Path(__file__).resolve().parent / "assets" / "privgame-icon.png"
st.set_page_config(page_title="privgame", page_icon=str(ICON), layout="wide")
navigation = st.navigation(
    [
        st.Page(_home_page, title="Home", icon=":material/home:", url_path="home", default=True),
        st.Page(PAGES["data"], title="Data", icon=":material/table_view:"),
        st.Page(PAGES["evaluate"], title="Evaluate", icon=":material/play_arrow:"),
        st.Page(PAGES["results"], title="Results", icon=":material/bar_chart:"),
        st.Page(PAGES["record"], title="Record", icon=":material/person_search:"),
        st.Page(PAGES["release"], title="Release", icon=":material/publish:"),
        st.Page(PAGES["remedies"], title="Remedies", icon=":material/healing:"),
        st.Page(PAGES["runs"], title="Runs", icon=":material/folder_open:"),
        st.Page(PAGES["export"], title="Export", icon=":material/download:"),
        st.Page(PAGES["studies"], title="Studies", icon=":material/science:"),
        st.Page(
            PAGES["check_file"], title="Check a file", icon=":material/fact_check:", url_path="check-file"
        ),
    ]
)
navigation.run()
warm_up()
