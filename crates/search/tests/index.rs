//! The derived index: versioned upserts and tombstones (no event can resurrect or roll back
//! a document), Japanese and Chinese found by any run of characters, highlights, filters,
//! and a rebuild from the source that answers exactly like the index built from events.

use async_trait::async_trait;
use contracts::events::{SearchContent, SearchDocument};
use contracts::search::{SearchQuery, SearchSource};
use contracts::PortError;
use search::SearchIndex;

fn problem(id: i64, version: i64, title: &str, body: &str, tags: &[&str]) -> SearchDocument {
    SearchDocument {
        kind: "problem".into(),
        id,
        version,
        content: Some(SearchContent {
            slug: format!("p{id}"),
            title: title.into(),
            body: body.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }),
    }
}

fn gone(id: i64, version: i64) -> SearchDocument {
    SearchDocument {
        kind: "problem".into(),
        id,
        version,
        content: None,
    }
}

fn q(text: &str) -> SearchQuery {
    SearchQuery {
        q: text.into(),
        kind: None,
        tag: None,
        limit: None,
    }
}

fn ids(index: &SearchIndex, query: &SearchQuery) -> Vec<i64> {
    index
        .query(query)
        .unwrap()
        .hits
        .iter()
        .map(|h| h.id)
        .collect()
}

fn open() -> (tempfile::TempDir, SearchIndex) {
    let dir = tempfile::tempdir().unwrap();
    let index = SearchIndex::open(dir.path()).unwrap();
    (dir, index)
}

#[test]
fn an_older_version_never_overwrites_a_newer_one() {
    let (_dir, index) = open();
    assert!(index
        .apply(&problem(1, 2, "Shortest paths", "Dijkstra", &[]))
        .unwrap());
    assert!(
        !index
            .apply(&problem(1, 1, "Old title", "stale", &[]))
            .unwrap(),
        "older"
    );
    assert!(
        !index
            .apply(&problem(1, 2, "Same version", "dup", &[]))
            .unwrap(),
        "redelivered"
    );
    assert_eq!(ids(&index, &q("dijkstra")), [1]);
    assert!(ids(&index, &q("stale")).is_empty());
    // Hidden: a tombstone, which an older upsert cannot bring back.
    assert!(index.apply(&gone(1, 3)).unwrap());
    assert!(!index
        .apply(&problem(1, 2, "Shortest paths", "Dijkstra", &[]))
        .unwrap());
    assert!(ids(&index, &q("dijkstra")).is_empty());
    assert!(index
        .apply(&problem(1, 4, "Shortest paths again", "Dijkstra", &[]))
        .unwrap());
    assert_eq!(ids(&index, &q("again")), [1]);
    assert_eq!(index.live_documents().unwrap(), 1);
}

#[test]
fn japanese_and_chinese_are_found_by_any_run_of_characters() {
    let (_dir, index) = open();
    index
        .apply(&problem(
            1,
            1,
            "二分探索の練習",
            "ソートされた配列から値を探します。",
            &["binary-search"],
        ))
        .unwrap();
    index
        .apply(&problem(
            2,
            1,
            "最短路径",
            "使用 Dijkstra 算法求最短路径。",
            &["graphs"],
        ))
        .unwrap();
    index
        .apply(&problem(
            3,
            1,
            "Binary search",
            "Find a value in a sorted array.",
            &["binary-search"],
        ))
        .unwrap();
    assert_eq!(ids(&index, &q("二分探索")), [1]);
    assert_eq!(ids(&index, &q("探索")), [1]);
    assert_eq!(ids(&index, &q("配列")), [1]);
    assert!(
        ids(&index, &q("探二")).is_empty(),
        "characters in sequence, not a bag"
    );
    assert_eq!(ids(&index, &q("路径")), [2]);
    assert_eq!(ids(&index, &q("dijkstra")), [2]);
    assert_eq!(ids(&index, &q("BINARY")), [3]);
    let tagged = SearchQuery {
        tag: Some("binary-search".into()),
        ..q("sorted OR 探")
    };
    let mut found = ids(&index, &tagged);
    found.sort();
    assert_eq!(found, [1, 3]);
    let kind = SearchQuery {
        kind: Some("user".into()),
        ..q("binary")
    };
    assert!(ids(&index, &kind).is_empty());
}

#[test]
fn matches_are_highlighted_and_text_is_escaped() {
    let (_dir, index) = open();
    index
        .apply(&problem(
            1,
            1,
            "<script>Sum</script> of pairs",
            "Count pairs <b>fast</b> & well.",
            &[],
        ))
        .unwrap();
    let hit = index.query(&q("pairs")).unwrap().hits.remove(0);
    assert!(
        hit.title_html.contains("<b>pairs</b>"),
        "{}",
        hit.title_html
    );
    assert!(
        hit.title_html.contains("&lt;script&gt;"),
        "{}",
        hit.title_html
    );
    assert!(!hit.title_html.contains("<script>"));
    assert!(
        hit.snippet_html.contains("&lt;b&gt;fast"),
        "{}",
        hit.snippet_html
    );
    assert!(hit.snippet_html.contains("&amp;"), "{}", hit.snippet_html);
}

#[test]
fn queries_are_checked_and_operators_never_fail() {
    let (_dir, index) = open();
    index
        .apply(&problem(1, 1, "A plus B", "Add two numbers (a + b).", &[]))
        .unwrap();
    assert!(index.query(&q("  ")).is_err());
    assert!(index.query(&q(&"x".repeat(201))).is_err());
    assert!(index
        .query(&SearchQuery {
            limit: Some(0),
            ..q("a")
        })
        .is_err());
    assert!(index
        .query(&SearchQuery {
            limit: Some(51),
            ..q("a")
        })
        .is_err());
    for odd in ["a + b", "\"unclosed", "title:(", "AND OR NOT", "b)"] {
        assert!(index.query(&q(odd)).is_ok(), "{odd}");
    }
}

struct Source(Vec<SearchDocument>);

#[async_trait]
impl SearchSource for Source {
    async fn documents(&self, after: i64, limit: u32) -> Result<Vec<SearchDocument>, PortError> {
        Ok(self
            .0
            .iter()
            .filter(|d| d.id > after)
            .take(limit as usize)
            .cloned()
            .collect())
    }
}

#[tokio::test]
async fn a_rebuild_answers_like_the_index_built_from_events() {
    let (_a, from_events) = open();
    // Events in any order, with repeats; the source holds each document's last version.
    let mut current = Vec::new();
    for id in 1..=300 {
        let last = problem(
            id,
            3,
            &format!("Problem {id}"),
            &format!("text {} 問題{id}", id % 7),
            &["t"],
        );
        let events = [
            problem(id, 2, "old", "old", &[]),
            last.clone(),
            problem(id, 1, "older", "older", &[]),
        ];
        for event in &events {
            from_events.apply(event).unwrap();
        }
        current.push(if id % 10 == 0 { gone(id, 4) } else { last });
    }
    for id in (10..=300).step_by(10) {
        from_events.apply(&gone(id, 4)).unwrap();
    }
    let (_b, rebuilt) = open();
    rebuilt
        .apply(&problem(99_999, 1, "stray", "not in the source", &[]))
        .unwrap();
    assert_eq!(
        rebuilt.rebuild(&Source(current.clone())).await.unwrap(),
        300
    );
    assert_eq!(rebuilt.entries().unwrap(), from_events.entries().unwrap());
    // The same matches (scores may differ: deleted documents count in the statistics of the
    // index built from events until its segments merge).
    for text in ["text 3", "問題", "問題77", "problem 77", "stray", "older"] {
        let query = SearchQuery {
            limit: Some(50),
            ..q(text)
        };
        let (a, b) = (
            rebuilt.query(&query).unwrap(),
            from_events.query(&query).unwrap(),
        );
        assert_eq!(a.total, b.total, "{text}");
        if a.total <= 50 {
            let sorted = |r: &contracts::search::SearchResults| {
                let mut ids: Vec<i64> = r.hits.iter().map(|h| h.id).collect();
                ids.sort();
                ids
            };
            assert_eq!(sorted(&a), sorted(&b), "{text}");
        }
    }
    assert_eq!(rebuilt.query(&q("問題77")).unwrap().total, 1);
    assert_eq!(rebuilt.live_documents().unwrap(), 270);
    // The index is derived: delete it, rebuild, and nothing is lost.
    let dir = tempfile::tempdir().unwrap();
    let again = SearchIndex::open(&dir.path().join("fresh")).unwrap();
    again.rebuild(&Source(current)).await.unwrap();
    assert_eq!(again.entries().unwrap(), from_events.entries().unwrap());
}
