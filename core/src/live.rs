//! STAND-IN (replaced by the live-38 branch): the API only.
#![allow(missing_docs)]
use crate::estimate::{Estimate, Interval};
use std::ops::Range;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveSeries {
    checkpoints: usize,
    objects: Vec<(Range<usize>, f64, Option<u64>)>,
}
impl LiveSeries {
    pub fn new(checkpoints: usize) -> Self {
        Self {
            checkpoints,
            objects: Vec::new(),
        }
    }
    pub fn checkpoints(&self) -> usize {
        self.checkpoints
    }
    pub fn add(&mut self, live: Range<usize>, weight: f64, size: Option<u64>) {
        let live = live.start.min(self.checkpoints)..live.end.min(self.checkpoints);
        if !live.is_empty() {
            self.objects.push((live, weight, size));
        }
    }
    pub fn merge(&mut self, other: &LiveSeries) {
        assert_eq!(self.checkpoints, other.checkpoints);
        self.objects.extend(other.objects.iter().cloned());
    }
    pub fn estimates(&self) -> Vec<Estimate> {
        let mut out = vec![Estimate::new(); self.checkpoints];
        for (range, weight, size) in &self.objects {
            for e in &mut out[range.clone()] {
                e.add_weighted(*weight, *size);
            }
        }
        out
    }
    pub fn memory_bytes(&self) -> usize {
        self.objects.len() * 40
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Growth {
    pub bytes_per_second: f64,
    pub interval: Interval,
    pub window: Range<usize>,
}
impl Growth {
    pub fn fit(seconds: &[f64], live: &[Estimate]) -> Option<Growth> {
        let n = seconds.len();
        if n < 4 {
            return None;
        }
        let from = seconds[0] + (seconds[n - 1] - seconds[0]) / 4.0;
        let start = seconds.iter().position(|&t| t >= from)?;
        let (x, y): (Vec<f64>, Vec<f64>) =
            (start..n).map(|k| (seconds[k], live[k].bytes())).unzip();
        if x.len() < 3 {
            return None;
        }
        let m = x.len() as f64;
        let (mx, my) = (x.iter().sum::<f64>() / m, y.iter().sum::<f64>() / m);
        let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
        let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
        let slope = sxy / sxx;
        let resid: f64 = x
            .iter()
            .zip(&y)
            .map(|(a, b)| (b - my - slope * (a - mx)).powi(2))
            .sum();
        let se = (resid / (m - 2.0) / sxx).sqrt();
        Some(Growth {
            bytes_per_second: slope,
            interval: Interval {
                estimate: slope,
                low: slope - 2.0 * se,
                high: slope + 2.0 * se,
            },
            window: start..n,
        })
    }
    pub fn is_suspect(&self) -> bool {
        self.interval.low > 0.0
    }
}
