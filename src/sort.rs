//! Stable sorting through one sort instance.
//!
//! `slice::sort_by` compiles a whole driftsort for each element type and
//! comparator; these merge-sort the slice's indices instead (one small
//! function for all of them) and then move the elements into place. The order is the one
//! `sort_by` gives: ties keep their original order.

use std::cmp::Ordering;

/// Sorts `items` by `compare`, keeping equal items in their original order.
pub fn by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    let order = sorted_indices(items.len(), &|a, b| match (items.get(a), items.get(b)) {
        (Some(x), Some(y)) => compare(x, y),
        _ => Ordering::Equal,
    });
    permute(order, &mut |a, b| items.swap(a, b));
}

/// Sorts `items` by `key`, keeping items of equal keys in their original order.
pub fn by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` ascending, keeping equal items in their original order.
pub fn ascending<T: Ord>(items: &mut [T]) {
    by(items, T::cmp);
}

/// `0..n` ordered by `compare`, ties in index order: a bottom-up merge sort,
/// small enough to be the only sort most element types need.
fn sorted_indices(n: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut merged: Vec<usize> = Vec::with_capacity(n);
    let mut width = 1;
    while width < n {
        merged.clear();
        for run in order.chunks(2 * width) {
            let (left, right) = run.split_at(width.min(run.len()));
            let (mut i, mut j) = (0, 0);
            while let (Some(&a), Some(&b)) = (left.get(i), right.get(j)) {
                // The right run's item goes first only when strictly smaller.
                if compare(b, a) == Ordering::Less {
                    merged.push(b);
                    j += 1;
                } else {
                    merged.push(a);
                    i += 1;
                }
            }
            merged.extend_from_slice(left.get(i..).unwrap_or(&[]));
            merged.extend_from_slice(right.get(j..).unwrap_or(&[]));
        }
        std::mem::swap(&mut order, &mut merged);
        width *= 2;
    }
    order
}

/// Moves element `order[i]` to place `i` for every `i`, one cycle at a time,
/// through `swap`.
fn permute(mut order: Vec<usize>, swap: &mut dyn FnMut(usize, usize)) {
    for start in 0..order.len() {
        let mut at = start;
        while let Some(slot) = order.get_mut(at) {
            let from = std::mem::replace(slot, at);
            if from == start || from == at {
                break;
            }
            swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_standard_stable_sort() {
        let mut seed = 7u64;
        for len in 0..40 {
            let mut items: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 60) as u8, i)
                })
                .collect();
            let mut expected = items.clone();
            expected.sort_by_key(|e| e.0);
            by_key(&mut items, |e| e.0);
            assert_eq!(items, expected);
            expected.sort_by(|a, b| b.cmp(a));
            by(&mut items, |a, b| b.cmp(a));
            assert_eq!(items, expected);
            expected.sort();
            ascending(&mut items);
            assert_eq!(items, expected);
        }
    }
}
