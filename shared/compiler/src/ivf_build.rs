//! Building the vector lists ([`wikantik_format::ivf`] has the format and the probe): spherical
//! k-means of the section vectors into lists of about [`LIST_ROWS`] rows. Deterministic (fixed
//! initialisation, fixed iteration count, ties by index): the same vectors always give
//! byte-identical shards.

use rayon::prelude::*;
use wikantik_format::error::{Error, Result};
use wikantik_format::ivf::{default_probe, list_count, VectorLists, GROUP_PROBE, LIST_ROWS};
use wikantik_format::lexical::SectionKey;
use wikantik_format::vectors::VectorPartition;

/// Lloyd iterations of the k-means (the assignment is stable well before this on real data).
const ITERATIONS: usize = 12;

/// A list may hold at most this many times [`LIST_ROWS`] rows: k-means on text embeddings
/// makes a few very large clusters, and a list that large would be one expensive fetch.
const MAX_LIST_FACTOR: usize = 3;

/// From this many lists on, the k-means runs in two levels ([`two_level_kmeans`]): about √lists
/// coarse clusters, then each cut into its share of the lists. One level costs rows × lists
/// dot products per round — at 120k pages (1.7 M sections, 12,900 lists) about 10¹⁴
/// multiply-adds in all, hours on two cores —; two levels cost rows × 2√lists.
const TWO_LEVELS_FROM_LISTS: usize = 2_048;

/// How many of its most similar lists a row may go to when the better ones are full (a
/// list holds [`MAX_LIST_FACTOR`] times the mean, so the eighth is far past what ever fills).
const OVERFLOW_CHOICES: usize = 8;

/// What [`build`] makes: the lists (list `i` is `vectors` partition `i`), their directory
/// (the `vector-lists` shard) and, when the centroids are grouped, each group's list
/// centroids (group `g` is `vector-groups` partition `g`; empty otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltLists {
    pub lists: Vec<VectorPartition>,
    pub directory: VectorLists,
    pub groups: Vec<VectorPartition>,
}

/// Cluster `rows` (unit vectors of `dim` values, any order) into [`list_count`] lists.
/// From `grouped_from` lists on ([`wikantik_format::ivf::GROUPED_FROM_LISTS`] in builds),
/// the lists' centroids are clustered the same way into about √lists groups, and the
/// directory holds the groups' centroids.
///
/// Each page card (`cards`: page key, unit vector) is stored in the list whose centroid is
/// most similar to it, so a query scores the cards of the lists it probes — the cards most
/// like it — and no shard holds every page's card (one such shard grows with the wiki: 4.6 MB
/// at 12k pages). A page whose card is not probed ranks as the least similar probed card.
pub fn build(dim: usize, rows: Vec<(SectionKey, Vec<f32>)>, cards: Vec<(u32, Vec<f32>)>, grouped_from: usize) -> Result<BuiltLists> {
    let lists = list_count(rows.len());
    let vectors: Vec<&[f32]> = rows.iter().map(|(_, v)| v.as_slice()).collect();
    if let Some(bad) = vectors.iter().position(|v| v.len() != dim) {
        return Err(Error::Invalid(format!("vector {bad} has {} values, expected {dim}", vectors[bad].len())));
    }
    let (centroids, assignment) = if lists <= 1 {
        (vec![mean_direction(&vectors, dim)], vec![0; vectors.len()])
    } else if lists >= TWO_LEVELS_FROM_LISTS {
        two_level_kmeans(&vectors, dim, lists)
    } else {
        kmeans(&vectors, dim, lists)
    };
    let mut members: Vec<Vec<(SectionKey, Vec<f32>)>> = vec![Vec::new(); centroids.len()];
    for ((key, vector), list) in rows.into_iter().zip(assignment) {
        members[list].push((key, vector));
    }
    let sizes: Vec<u32> = members.iter().map(|m| m.len() as u32).collect();
    let probe = default_probe(sizes.len()) as u32;
    let (directory, groups) = if centroids.len() >= grouped_from.max(2) {
        // Groups of lists: k-means of the list centroids into about √lists groups.
        let group_count = (centroids.len() as f64).sqrt().ceil() as usize;
        let refs: Vec<&[f32]> = centroids.iter().map(Vec::as_slice).collect();
        let (group_centroids, group_of) = kmeans(&refs, dim, group_count);
        let mut group_members: Vec<Vec<(SectionKey, Vec<f32>)>> = vec![Vec::new(); group_centroids.len()];
        for (list, (centroid, group)) in centroids.iter().zip(group_of).enumerate() {
            group_members[group].push((SectionKey(list as u64), centroid.clone()));
        }
        let groups = group_members.into_iter().map(|m| VectorPartition::quantize(dim, m)).collect::<Result<Vec<_>>>()?;
        let group_rows = group_centroids.into_iter().enumerate().map(|(g, c)| (SectionKey(g as u64), c)).collect();
        let group_probe = GROUP_PROBE.min(groups.len()) as u32;
        (VectorLists { centroids: VectorPartition::quantize(dim, group_rows)?, probe, rows: sizes, group_probe: Some(group_probe) }, groups)
    } else {
        let centroid_rows = centroids.into_iter().enumerate().map(|(i, c)| (SectionKey(i as u64), c)).collect();
        (VectorLists { centroids: VectorPartition::quantize(dim, centroid_rows)?, probe, rows: sizes, group_probe: None }, Vec::new())
    };
    // A card goes where a query equal to it is routed first (the stored, int8 centroids).
    let mut card_members: Vec<Vec<(u32, Vec<f32>)>> = vec![Vec::new(); members.len()];
    for (page, vector) in cards {
        let opened: Vec<&VectorPartition> = directory.nearest_groups(&vector)?.into_iter().filter_map(|g| groups.get(g as usize)).collect();
        let list = directory.route(&opened, &vector, 1)?.first().map_or(0, |&l| l as usize);
        card_members.get_mut(list).ok_or_else(|| Error::Invalid(format!("card of page {page:x}: no list {list}")))?.push((page, vector));
    }
    let partitions = members
        .into_iter()
        .zip(card_members)
        .map(|(m, c)| VectorPartition::quantize_with_cards(dim, m, c))
        .collect::<Result<Vec<_>>>()?;
    Ok(BuiltLists { lists: partitions, directory, groups })
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

fn mean_direction(vectors: &[&[f32]], dim: usize) -> Vec<f32> {
    let mut sum = vec![0f32; dim];
    for v in vectors {
        sum.iter_mut().zip(v.iter()).for_each(|(s, x)| *s += x);
    }
    normalise(&mut sum);
    sum
}

/// Spherical k-means in two levels: [`kmeans`] of every row into about √`lists` coarse clusters,
/// then of each coarse cluster's rows into its share of `lists` (at least one; in proportion to
/// its rows), on every core; list numbers follow the coarse clusters' order. Each row's list is
/// the most similar within its coarse cluster (capped there), not over every list.
fn two_level_kmeans(vectors: &[&[f32]], dim: usize, lists: usize) -> (Vec<Vec<f32>>, Vec<usize>) {
    let n = vectors.len();
    let coarse = (lists as f64).sqrt().ceil() as usize;
    let (_, coarse_of) = kmeans(vectors, dim, coarse);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); coarse];
    for (row, &c) in coarse_of.iter().enumerate() {
        members[c].push(row);
    }
    let shares: Vec<usize> = members.iter().map(|m| if m.is_empty() { 0 } else { (m.len() * lists / n.max(1)).max(1).min(m.len()) }).collect();
    let parts: Vec<(Vec<Vec<f32>>, Vec<usize>)> = members
        .par_iter()
        .zip(shares.par_iter())
        .map(|(rows, &share)| {
            let part: Vec<&[f32]> = rows.iter().map(|&r| vectors[r]).collect();
            match share {
                0 => (Vec::new(), Vec::new()),
                1 => (vec![mean_direction(&part, dim)], vec![0; part.len()]),
                _ => kmeans(&part, dim, share),
            }
        })
        .collect();
    let mut centroids = Vec::with_capacity(lists);
    let mut assignment = vec![0usize; n];
    for (rows, (part_centroids, part_assignment)) in members.iter().zip(parts) {
        let first = centroids.len();
        for (&row, &list) in rows.iter().zip(&part_assignment) {
            assignment[row] = first + list;
        }
        centroids.extend(part_centroids);
    }
    (centroids, assignment)
}

/// Spherical k-means: centroids start at evenly spaced rows (rows are in key order, i.e.
/// spread over the wiki), then [`ITERATIONS`] rounds of assign-to-most-similar and
/// re-centre; an emptied list restarts at the row least similar to its own centroid. The
/// final assignment caps lists at [`MAX_LIST_FACTOR`] × [`LIST_ROWS`] rows, sending the
/// overflow (the rows that fit their list least well) to their next most similar list.
fn kmeans(vectors: &[&[f32]], dim: usize, lists: usize) -> (Vec<Vec<f32>>, Vec<usize>) {
    let n = vectors.len();
    let mut centroids: Vec<Vec<f32>> = (0..lists).map(|i| vectors[i * n / lists].to_vec()).collect();
    let mut assignment = vec![0usize; n];
    for _ in 0..ITERATIONS {
        // Rows are assigned in parallel; each row's answer depends on it alone (deterministic).
        let best: Vec<(usize, f32)> = vectors
            .par_iter()
            .map(|v| {
                centroids
                    .iter()
                    .enumerate()
                    .map(|(c, centroid)| (c, dot(v, centroid)))
                    .fold((0, f32::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a })
            })
            .collect();
        let fit: Vec<f32> = best.iter().map(|b| b.1).collect();
        for (slot, (list, _)) in assignment.iter_mut().zip(&best) {
            *slot = *list;
        }
        let mut sums = vec![vec![0f32; dim]; lists];
        let mut counts = vec![0usize; lists];
        for (v, &c) in vectors.iter().zip(&assignment) {
            counts[c] += 1;
            sums[c].iter_mut().zip(v.iter()).for_each(|(s, x)| *s += x);
        }
        let mut worst: Vec<usize> = (0..n).collect();
        worst.sort_by(|&a, &b| fit[a].total_cmp(&fit[b]).then(a.cmp(&b)));
        let mut reseeds = worst.into_iter();
        for (c, sum) in sums.into_iter().enumerate() {
            if counts[c] == 0 {
                if let Some(row) = reseeds.next() {
                    centroids[c] = vectors[row].to_vec();
                }
            } else {
                centroids[c] = sum;
                normalise(&mut centroids[c]);
            }
        }
    }
    let capacity = MAX_LIST_FACTOR * LIST_ROWS.max(n.div_ceil(lists));
    // Each row's [`OVERFLOW_CHOICES`] most similar lists, best first (not every list: n × lists
    // scores would be gigabytes at 100k pages).
    let mut ranked: Vec<(usize, Vec<(usize, f32)>)> = vectors
        .par_iter()
        .enumerate()
        .map(|(i, v)| {
            let mut order: Vec<(usize, f32)> = centroids.iter().enumerate().map(|(c, centroid)| (c, dot(v, centroid))).collect();
            let keep = OVERFLOW_CHOICES.min(order.len());
            let by_fit = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
            if keep < order.len() {
                order.select_nth_unstable_by(keep - 1, by_fit);
                order.truncate(keep);
            }
            order.sort_by(by_fit);
            (i, order)
        })
        .collect();
    // Best-fitting rows claim their list first, so the capped overflow is the worst fits.
    ranked.sort_by(|a, b| b.1[0].1.total_cmp(&a.1[0].1).then(a.0.cmp(&b.0)));
    let mut counts = vec![0usize; lists];
    for (i, order) in ranked {
        let list = order.iter().map(|(c, _)| *c).find(|&c| counts[c] < capacity).unwrap_or(order[0].0);
        counts[list] += 1;
        assignment[i] = list;
    }
    (centroids, assignment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wikantik_format::ivf::GROUPED_FROM_LISTS;

    fn unit_vectors(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                let mut v: Vec<f32> = (0..dim)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
                    })
                    .collect();
                normalise(&mut v);
                v
            })
            .collect()
    }

    #[test]
    fn two_level_lists_cover_every_row_and_route_it_near_its_best_list() {
        let rows = clustered(40, 60, 16);
        let vectors: Vec<&[f32]> = rows.iter().map(|(_, v)| v.as_slice()).collect();
        let (centroids, assignment) = two_level_kmeans(&vectors, 16, 100);
        assert!((70..=130).contains(&centroids.len()), "about the lists asked for: {}", centroids.len());
        assert_eq!(assignment.len(), rows.len());
        assert!(assignment.iter().all(|&l| l < centroids.len()));
        let mut used = vec![false; centroids.len()];
        assignment.iter().for_each(|&l| used[l] = true);
        assert!(used.iter().filter(|u| **u).count() * 10 >= centroids.len() * 9, "lists are used");
        // A row's list is among its eight most similar over every list, for nearly every row.
        let near = vectors
            .iter()
            .zip(&assignment)
            .filter(|(v, &list)| {
                let own = dot(v, &centroids[list]);
                centroids.iter().filter(|c| dot(v, c) > own).count() < 8
            })
            .count();
        assert!(near * 10 >= rows.len() * 9, "{near} of {}", rows.len());
        // Deterministic: the same rows, the same lists.
        assert_eq!(two_level_kmeans(&vectors, 16, 100), (centroids, assignment));
    }

    /// `groups` tight clusters around random directions.
    fn clustered(groups: usize, per_group: usize, dim: usize) -> Vec<(SectionKey, Vec<f32>)> {
        let centres = unit_vectors(groups, dim, 11);
        let noise = unit_vectors(groups * per_group, dim, 12);
        (0..groups * per_group)
            .map(|i| {
                let mut v: Vec<f32> = centres[i % groups].iter().zip(&noise[i]).map(|(c, e)| c + 0.3 * e).collect();
                normalise(&mut v);
                (SectionKey(i as u64), v)
            })
            .collect()
    }

    #[test]
    fn small_indexes_keep_one_list_that_holds_everything() {
        let rows = clustered(4, 50, 32);
        let BuiltLists { lists, directory, .. } = build(32, rows.clone(), Vec::new(), GROUPED_FROM_LISTS).unwrap();
        assert_eq!((lists.len(), directory.rows.clone(), directory.probe), (1, vec![200], 1));
        assert_eq!(lists[0].keys, rows.iter().map(|(k, _)| k.0).collect::<Vec<_>>());
    }

    #[test]
    fn every_row_lands_in_exactly_one_list_and_lists_are_capped() {
        let rows = clustered(20, 150, 48);
        let BuiltLists { lists, directory, .. } = build(48, rows.clone(), Vec::new(), GROUPED_FROM_LISTS).unwrap();
        assert_eq!(lists.len(), list_count(3000));
        assert_eq!(directory.len(), lists.len());
        let mut seen: Vec<u64> = lists.iter().flat_map(|l| l.keys.iter().copied()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..3000).collect::<Vec<_>>());
        for (list, &size) in lists.iter().zip(&directory.rows) {
            assert_eq!(list.keys.len(), size as usize);
            assert!(list.keys.len() <= MAX_LIST_FACTOR * LIST_ROWS, "list of {}", list.keys.len());
        }
        assert_eq!(directory.probe as usize, default_probe(lists.len()));
    }

    #[test]
    fn the_nearest_list_holds_a_rows_own_cluster() {
        let rows = clustered(20, 150, 48);
        let BuiltLists { lists, directory, .. } = build(48, rows.clone(), Vec::new(), GROUPED_FROM_LISTS).unwrap();
        let list_of = |key: u64| lists.iter().position(|l| l.keys.contains(&key)).unwrap();
        // A query equal to a stored row finds that row in its first probed list.
        let mut hits = 0;
        for (key, vector) in rows.iter().step_by(37) {
            let nearest = directory.nearest(vector, 1).unwrap();
            hits += usize::from(nearest[0] as usize == list_of(key.0));
        }
        assert!(hits * 10 >= rows.iter().step_by(37).count() * 9, "{hits}");
    }

    #[test]
    fn each_card_goes_to_the_list_nearest_it_and_only_there() {
        let rows = clustered(20, 150, 48);
        // A card per cluster, at the cluster's own rows (page key = cluster number).
        let cards: Vec<(u32, Vec<f32>)> = (0..20).map(|g| (g as u32, rows[g].1.clone())).collect();
        let BuiltLists { lists, directory, .. } = build(48, rows.clone(), cards.clone(), GROUPED_FROM_LISTS).unwrap();
        let mut placed: Vec<u32> = lists.iter().flat_map(|l| l.card_keys.iter().copied()).collect();
        placed.sort_unstable();
        assert_eq!(placed, (0..20).collect::<Vec<_>>(), "every card once");
        for (page, vector) in &cards {
            let holder = lists.iter().position(|l| l.card_keys.contains(page)).unwrap();
            assert_eq!(directory.nearest(vector, 1).unwrap()[0] as usize, holder, "card {page}");
        }
        // Cards do not count as rows.
        assert_eq!(directory.rows.iter().sum::<u32>(), 3000);
        let mut bad = cards;
        bad[0].1.pop();
        assert!(build(48, rows, bad, GROUPED_FROM_LISTS).is_err(), "a card of the wrong dimension is an error");
    }

    #[test]
    fn grouped_centroids_route_a_query_to_its_own_list_through_its_groups() {
        let rows = clustered(20, 150, 48);
        let cards: Vec<(u32, Vec<f32>)> = (0..40).map(|i| (i as u32, rows[i * 7].1.clone())).collect();
        let BuiltLists { lists, directory, groups } = build(48, rows.clone(), cards, 2).unwrap();
        let list_count = lists.len();
        assert_eq!(groups.len(), (list_count as f64).sqrt().ceil() as usize);
        assert_eq!((directory.centroids.keys.len(), directory.rows.len()), (groups.len(), list_count));
        assert_eq!(directory.group_probe, Some(GROUP_PROBE as u32));
        let mut grouped: Vec<u64> = groups.iter().flat_map(|g| g.keys.iter().copied()).collect();
        grouped.sort_unstable();
        assert_eq!(grouped, (0..list_count as u64).collect::<Vec<_>>(), "every list in exactly one group");
        assert!(directory.nearest(&rows[0].1, 1).is_err(), "a grouped directory cannot route alone");
        let route = |v: &[f32]| {
            let opened: Vec<&VectorPartition> = directory.nearest_groups(v).unwrap().into_iter().map(|g| &groups[g as usize]).collect();
            directory.route(&opened, v, 1).unwrap()[0] as usize
        };
        let list_of = |key: u64| lists.iter().position(|l| l.keys.contains(&key)).unwrap();
        let sample: Vec<_> = rows.iter().step_by(37).collect();
        let hits = sample.iter().filter(|(key, v)| route(v) == list_of(key.0)).count();
        assert!(hits * 10 >= sample.len() * 8, "{hits} of {}", sample.len());
        // Cards sit where the grouped routing sends a query equal to them.
        let placed: usize = lists.iter().map(|l| l.card_keys.len()).sum();
        assert_eq!(placed, 40);
        for i in 0..40 {
            let holder = lists.iter().position(|l| l.card_keys.contains(&(i as u32))).unwrap();
            assert_eq!(route(&rows[i * 7].1), holder, "card {i}");
        }
    }

    #[test]
    fn builds_are_deterministic() {
        let rows = clustered(10, 300, 24);
        assert_eq!(build(24, rows.clone(), Vec::new(), 2).unwrap(), build(24, rows, Vec::new(), 2).unwrap(), "grouped too");
    }

    #[test]
    fn wrong_dimension_is_an_error() {
        let mut rows = clustered(2, 5, 8);
        rows[3].1.pop();
        assert!(build(8, rows, Vec::new(), GROUPED_FROM_LISTS).is_err());
    }
}
