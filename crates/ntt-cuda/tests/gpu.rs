//! GPU against the CPU reference: field arithmetic against blstrs, every NTT variant for sizes 2^1..2^20, batches, and the H polynomial.
//! Skipped with a printed reason without a GPU; failing instead when CUZK_REQUIRE_GPU=1.
//! `cargo test -p ntt-cuda --test gpu -- --ignored` runs the heavy sweep (2^24, 2^27).

use blstrs::Scalar;
use ff::Field;
use ntt_cuda::gpu::{self, DeviceScalars, Direction, GpuDomain, Order, Stream};
use ntt_cuda::{bit_reverse, coset_generator, h_polynomial, h_polynomial_reference, Domain};
use rand::Rng;
use std::time::Instant;
use test_utils::{edge_or_random_scalar, fresh_rng, gpu_or_skip, par_scalars, random_scalars};

mod field_ops;

/// Held by the tests that watch the device pool's memory, so that neither sees the other's buffers.
static POOL_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn field_arithmetic_matches_blstrs() {
    if !gpu_or_skip("field_arithmetic_matches_blstrs", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("field_arithmetic_matches_blstrs");
    field_ops::check_field_ops(
        &mut |op, a, b| gpu::fr_elementwise(op, a, b).unwrap(),
        4000,
        &mut rng,
    );
}

/// Every order and direction, plain and coset, against the CPU domain, for one size.
fn check_size(log_n: u32, rng: &mut impl Rng) {
    let cpu = Domain::new(log_n).unwrap();
    let gpu_domain = GpuDomain::new(log_n).unwrap();
    let stream = Stream::new().unwrap();
    let n = cpu.size();
    let g = coset_generator();
    let input = random_scalars(n, rng);
    let run = |data: &[Scalar], dir, input_order, output_order, coset: Option<&Scalar>| {
        let mut d = DeviceScalars::from_host_padded(data, n, &stream).unwrap();
        gpu_domain
            .ntt(&mut d, 1, dir, input_order, output_order, coset, &stream)
            .unwrap();
        d.to_host(n, &stream).unwrap()
    };
    let reversed = |v: &[Scalar]| {
        let mut v = v.to_vec();
        bit_reverse(&mut v);
        v
    };
    let mut fwd = input.clone();
    cpu.fft(&mut fwd).unwrap();
    let mut inv = input.clone();
    cpu.ifft(&mut inv).unwrap();
    let mut cfwd = input.clone();
    cpu.coset_fft(&mut cfwd, g).unwrap();
    let mut cinv = input.clone();
    cpu.icoset_fft(&mut cinv, g).unwrap();
    use Direction::*;
    use Order::*;
    assert_eq!(
        run(&input, Forward, Natural, Natural, None),
        fwd,
        "forward NN 2^{log_n}"
    );
    assert_eq!(
        run(&input, Forward, Natural, BitReversed, None),
        reversed(&fwd),
        "forward NR 2^{log_n}"
    );
    assert_eq!(
        run(&reversed(&input), Forward, BitReversed, Natural, None),
        fwd,
        "forward RN 2^{log_n}"
    );
    assert_eq!(
        run(&reversed(&input), Forward, BitReversed, BitReversed, None),
        reversed(&fwd),
        "forward RR 2^{log_n}"
    );
    assert_eq!(
        run(&input, Inverse, Natural, Natural, None),
        inv,
        "inverse NN 2^{log_n}"
    );
    assert_eq!(
        run(&input, Inverse, Natural, BitReversed, None),
        reversed(&inv),
        "inverse NR 2^{log_n}"
    );
    assert_eq!(
        run(&reversed(&input), Inverse, BitReversed, Natural, None),
        inv,
        "inverse RN 2^{log_n}"
    );
    assert_eq!(
        run(&input, Forward, Natural, Natural, Some(&g)),
        cfwd,
        "coset forward NN 2^{log_n}"
    );
    assert_eq!(
        run(&reversed(&input), Forward, BitReversed, Natural, Some(&g)),
        cfwd,
        "coset forward RN 2^{log_n}"
    );
    assert_eq!(
        run(&input, Inverse, Natural, Natural, Some(&g)),
        cinv,
        "coset inverse NN 2^{log_n}"
    );
    assert_eq!(
        run(&input, Inverse, Natural, BitReversed, Some(&g)),
        reversed(&cinv),
        "coset inverse NR 2^{log_n}"
    );
}

#[test]
fn ntt_matches_cpu_every_size_up_to_2_20() {
    if !gpu_or_skip("ntt_matches_cpu_every_size_up_to_2_20", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("ntt_matches_cpu_every_size_up_to_2_20");
    for log_n in 0..=20 {
        check_size(log_n, &mut rng);
    }
}

/// Coset transforms on one domain and stream, checked against the CPU's.
struct CosetCheck<'a> {
    cpu: &'a Domain,
    domain: &'a GpuDomain,
    stream: &'a Stream,
}

impl CosetCheck<'_> {
    /// The transform of `input` on the coset of `g` (forward or inverse, from natural or bit-reversed order, to
    /// natural order) equals the CPU's.
    fn check(&self, input: &[Scalar], g: Scalar, direction: Direction, from: Order, what: &str) {
        let n = self.cpu.size();
        let mut expect = input.to_vec();
        match direction {
            Direction::Forward => self.cpu.coset_fft(&mut expect, g).unwrap(),
            Direction::Inverse => self.cpu.icoset_fft(&mut expect, g).unwrap(),
        }
        let mut given = input.to_vec();
        if from == Order::BitReversed {
            bit_reverse(&mut given);
        }
        let mut d = DeviceScalars::from_host_padded(&given, n, self.stream).unwrap();
        self.domain
            .ntt(
                &mut d,
                1,
                direction,
                from,
                Order::Natural,
                Some(&g),
                self.stream,
            )
            .unwrap();
        assert!(
            d.to_host(n, self.stream).unwrap() == expect,
            "{what}: {direction:?} from {from:?} on a coset, 2^{}",
            self.cpu.log_size()
        );
    }
}

/// A domain keeps the first coset tables it makes (up to eight sets) and later calls only wait for them: transforms
/// on many cosets of one domain, each coset twice and past the domain's limit, then from several threads at once
/// on a fresh domain, all against the CPU; and H after the domain's list is full.
#[test]
fn coset_tables_kept_by_a_domain_serve_every_coset() {
    if !gpu_or_skip(
        "coset_tables_kept_by_a_domain_serve_every_coset",
        gpu::device(),
    ) {
        return;
    }
    let mut rng = fresh_rng("coset_tables_kept_by_a_domain_serve_every_coset");
    // 2^13 has two entries in the coset tables' high part (COSET_LO_BITS = 12).
    for log_n in [1u32, 5, 13] {
        let cpu = Domain::new(log_n).unwrap();
        let n = cpu.size();
        let domain = GpuDomain::new(log_n).unwrap();
        let stream = Stream::new().unwrap();
        let on = CosetCheck {
            cpu: &cpu,
            domain: &domain,
            stream: &stream,
        };
        let mut cosets = vec![coset_generator()];
        cosets.extend((0..11).map(|_| loop {
            let g = Scalar::random(&mut rng);
            if !bool::from(g.is_zero()) {
                break g;
            }
        }));
        for round in 0..2 {
            for (i, &g) in cosets.iter().enumerate() {
                let input = random_scalars(n, &mut rng);
                let what = format!("round {round}, coset {i}");
                on.check(&input, g, Direction::Forward, Order::Natural, &what);
                on.check(&input, g, Direction::Inverse, Order::Natural, &what);
                on.check(&input, g, Direction::Inverse, Order::BitReversed, &what);
            }
        }
        // H's two sets of tables no longer fit the domain's list: each call makes its own.
        for _ in 0..2 {
            let (a, b, c) = (
                random_scalars(n, &mut rng),
                random_scalars(n, &mut rng),
                random_scalars(n, &mut rng),
            );
            let expected = h_polynomial_reference(a.clone(), b.clone(), c.clone()).unwrap();
            assert!(
                gpu::h_polynomial_gpu(&domain, &a, &b, &c).unwrap() == expected,
                "H on a domain with a full list of coset tables, 2^{log_n}"
            );
        }
        // Four threads on a fresh domain, two cosets each, the first shared by all: the first calls race to make
        // the same tables.
        let domain = GpuDomain::new(log_n).unwrap();
        let inputs: Vec<Vec<Scalar>> = (0..4).map(|_| random_scalars(n, &mut rng)).collect();
        std::thread::scope(|s| {
            for (t, input) in inputs.iter().enumerate() {
                let (cpu, domain, cosets) = (&cpu, &domain, &cosets);
                s.spawn(move || {
                    let stream = Stream::new().unwrap();
                    let on = CosetCheck {
                        cpu,
                        domain,
                        stream: &stream,
                    };
                    for g in [cosets[0], cosets[1 + t]] {
                        for _ in 0..3 {
                            let what = format!("thread {t}");
                            on.check(input, g, Direction::Inverse, Order::Natural, &what);
                            on.check(input, g, Direction::Forward, Order::Natural, &what);
                        }
                    }
                });
            }
        });
    }
}

#[test]
fn batched_ntt_matches_cpu() {
    if !gpu_or_skip("batched_ntt_matches_cpu", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("batched_ntt_matches_cpu");
    for log_n in [1u32, 5, 11, 13] {
        let cpu = Domain::new(log_n).unwrap();
        let n = cpu.size();
        let batch = 3;
        let data = random_scalars(batch * n, &mut rng);
        let stream = Stream::new().unwrap();
        let domain = GpuDomain::new(log_n).unwrap();
        let mut d = DeviceScalars::from_host_padded(&data, batch * n, &stream).unwrap();
        domain
            .ntt(
                &mut d,
                batch,
                Direction::Forward,
                Order::Natural,
                Order::Natural,
                None,
                &stream,
            )
            .unwrap();
        let got = d.to_host(batch * n, &stream).unwrap();
        for k in 0..batch {
            let mut expect = data[k * n..(k + 1) * n].to_vec();
            cpu.fft(&mut expect).unwrap();
            assert_eq!(
                &got[k * n..(k + 1) * n],
                &expect[..],
                "batch item {k} of 2^{log_n}"
            );
        }
        // The inverse on a coset, natural to natural: its last pass scales each item by the same tables.
        let g = coset_generator();
        let mut d = DeviceScalars::from_host_padded(&data, batch * n, &stream).unwrap();
        domain
            .ntt(
                &mut d,
                batch,
                Direction::Inverse,
                Order::Natural,
                Order::Natural,
                Some(&g),
                &stream,
            )
            .unwrap();
        let got = d.to_host(batch * n, &stream).unwrap();
        for k in 0..batch {
            let mut expect = data[k * n..(k + 1) * n].to_vec();
            cpu.icoset_fft(&mut expect, g).unwrap();
            assert_eq!(
                &got[k * n..(k + 1) * n],
                &expect[..],
                "inverse coset batch item {k} of 2^{log_n}"
            );
        }
        // Wrong length is an error, not a fault.
        assert!(domain
            .ntt(
                &mut d,
                2,
                Direction::Forward,
                Order::Natural,
                Order::Natural,
                None,
                &stream
            )
            .is_err());
    }
}

/// Returns the seconds its CPU side took (the reference, and the CPU's own H up to 2^20).
fn check_h(len: usize, rng: &mut impl Rng) -> f64 {
    let a = random_scalars(len, rng);
    let b = random_scalars(len, rng);
    // Half satisfied rows, half not: H is defined either way and both sides must agree.
    let c = par_scalars(len, rng, |r, i| {
        if i % 2 == 0 {
            a[i] * b[i]
        } else {
            edge_or_random_scalar(r)
        }
    });
    // bellperson's own sequence (the GPU takes six transforms where it takes seven), and the CPU's six up to 2^20 (the
    // CPU tests compare those two at every size; the heavy sweep's 2^27 keeps to the one reference).
    let t = Instant::now();
    let expected = h_polynomial_reference(a.clone(), b.clone(), c.clone()).unwrap();
    if len <= 1 << 20 {
        assert!(h_polynomial(a.clone(), b.clone(), c.clone()).unwrap() == expected);
    }
    let cpu_s = t.elapsed().as_secs_f64();
    let domain = GpuDomain::new(Domain::for_len(len).unwrap().log_size()).unwrap();
    let got = gpu::h_polynomial_gpu(&domain, &a, &b, &c).unwrap();
    assert_eq!(got.len(), expected.len(), "length for {len}");
    assert!(got == expected, "H differs for length {len}");
    // The same from pinned host memory (asynchronous uploads on three streams).
    let pinned = |v: &[Scalar]| gpu::PinnedScalars::from_slice(v).unwrap();
    let (pa, pb, pc) = (pinned(&a), pinned(&b), pinned(&c));
    let (h, stream) = gpu::h_polynomial_on_device(&domain, &pa, &pb, &pc).unwrap();
    drop((pa, pb, pc)); // the call has finished with them
    assert!(
        h.to_host(expected.len(), &stream).unwrap() == expected,
        "H from pinned memory differs for length {len}"
    );
    // The same through the pinned staging chunks.
    let (h, stream) = gpu::h_polynomial_staged(&domain, &a, &b, &c).unwrap();
    assert!(
        h.to_host(expected.len(), &stream).unwrap() == expected,
        "H through staging differs for length {len}"
    );
    cpu_s
}

#[test]
fn staged_uploads_land_every_chunk_in_place() {
    if !gpu_or_skip("staged_uploads_land_every_chunk_in_place", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("staged_uploads_land_every_chunk_in_place");
    // Chunks of 7 scalars: lengths below one chunk, exactly one, two, and many with a ragged tail.
    let mut staging = gpu::Staging::new(7).unwrap();
    let stream = gpu::Stream::new().unwrap();
    for len in [0usize, 1, 6, 7, 14, 15, 1000, 4099] {
        let host = random_scalars(len, &mut rng);
        let mut dst = gpu::DeviceScalars::zeroed(len + 5, &stream).unwrap();
        stream.synchronize().unwrap();
        staging.upload(&host, &mut dst).unwrap();
        let back = dst.to_host(len + 5, &stream).unwrap();
        assert!(
            back[..len] == host[..],
            "staged upload of {len} scalars differs"
        );
        assert!(
            back[len..].iter().all(|x| bool::from(x.is_zero())),
            "tail of {len} was written"
        );
    }
    // Registered in place (cudaHostRegister): asynchronous uploads from ordinary vectors, then unregistered on drop.
    for len in [0usize, 1, 4099] {
        let host = random_scalars(len, &mut rng);
        let pinned = gpu::Registered::new(&host).unwrap();
        let dst = gpu::DeviceScalars::from_host_padded(&host, len + 2, &stream).unwrap();
        stream.synchronize().unwrap();
        drop(pinned);
        let back = dst.to_host(len + 2, &stream).unwrap();
        assert!(
            back[..len] == host[..],
            "registered upload of {len} scalars differs"
        );
    }
    // Too long for the destination: an error, not an overrun.
    let mut small = gpu::DeviceScalars::zeroed(3, &stream).unwrap();
    let err = staging
        .upload(&random_scalars(4, &mut rng), &mut small)
        .unwrap_err();
    assert!(err.to_string().contains("staged upload"), "{err}");
}

#[test]
fn pooled_buffers_come_back_zeroed_and_counted_free() {
    if !gpu_or_skip(
        "pooled_buffers_come_back_zeroed_and_counted_free",
        gpu::device(),
    ) {
        return;
    }
    let _alone = POOL_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = fresh_rng("pooled_buffers_come_back_zeroed_and_counted_free");
    let stream = gpu::Stream::new().unwrap();
    // 64 MiB buffers: a freed one stays in the device's pool, and the next of its size is served from it.
    let len = 1usize << 21;
    let (free_before, _) = gpu::mem_info().unwrap();
    for round in 0..3 {
        let host = random_scalars(len, &mut rng);
        let mut buf = gpu::DeviceScalars::zeroed(len, &stream).unwrap();
        stream.synchronize().unwrap();
        let back = buf.to_host(len, &stream).unwrap();
        assert!(
            back.iter().all(|x| bool::from(x.is_zero())),
            "round {round}: a buffer from the pool was not zeroed"
        );
        buf.write_at(0, &host, &stream).unwrap();
        assert!(
            buf.to_host(len, &stream).unwrap() == host,
            "round {round}: write"
        );
        // A second buffer alive at the same time must not share the first one's memory.
        let other = gpu::DeviceScalars::from_host_padded(&host[..5], len, &stream).unwrap();
        stream.synchronize().unwrap();
        assert!(
            other.device_ptr() != buf.device_ptr(),
            "two live buffers share memory"
        );
        assert!(
            buf.to_host(len, &stream).unwrap() == host,
            "round {round}: the second buffer's zeroing reached the first"
        );
    }
    // What the pool holds unused counts as free (give or take other processes and this one's caches), and trimming
    // gives it back without changing that count by more than the same margin.
    let (free_after, total) = gpu::mem_info().unwrap();
    let slack = 512u64 << 20;
    assert!(
        free_after + slack >= free_before,
        "free memory fell from {free_before} to {free_after} bytes of {total}: pooled memory not counted as free"
    );
    gpu::trim_pool().unwrap();
    let (free_trimmed, _) = gpu::mem_info().unwrap();
    assert!(
        free_trimmed + slack >= free_after,
        "trimming the pool lost memory: {free_after} -> {free_trimmed}"
    );
}

/// A call that fails while work is queued on a buffer, and the buffer dropped at once (as a `?` does): the memory
/// must not reach a new buffer before that work is done. The device pool reuses freed memory at once, so the free
/// after a failure waits for the device (`ntt.h`); with `CUZK_DEVICE_SETTLE=off` this test fails, which shows that it
/// exercises the reuse (as long as the pool hands the freed memory to the next buffer, which it reports otherwise).
#[test]
fn a_failure_settles_queued_work_before_its_buffers_are_reused() {
    if !gpu_or_skip(
        "a_failure_settles_queued_work_before_its_buffers_are_reused",
        gpu::device(),
    ) {
        return;
    }
    let _alone = POOL_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let log_n = 24;
    let n = 1usize << log_n;
    // Made first: the host must be quick between the failure and the new buffer's upload.
    let pattern: Vec<Scalar> = (0..n as u64).map(|i| Scalar::from(i + 1)).collect();
    let domain = GpuDomain::new(log_n).unwrap();
    let work = Stream::new().unwrap();
    let other = Stream::new().unwrap();
    let mut x = DeviceScalars::zeroed(n, &work).unwrap();
    work.synchronize().unwrap();
    let x_addr = x.device_ptr() as usize;
    // About 0.6 s of transforms in place on x, queued.
    for _ in 0..100 {
        domain
            .ntt(
                &mut x,
                1,
                Direction::Forward,
                Order::Natural,
                Order::Natural,
                None,
                &work,
            )
            .unwrap();
    }
    // Something fails while they run: an allocation no card can serve. Then x goes, as on an error path.
    assert!(DeviceScalars::zeroed(1usize << 50, &work).is_err());
    drop(x);
    let y = DeviceScalars::from_host_padded(&pattern, n, &other).unwrap();
    other.synchronize().unwrap();
    work.synchronize().unwrap();
    if y.device_ptr() as usize == x_addr {
        eprintln!("a_failure_settles_queued_work_before_its_buffers_are_reused: the new buffer took the freed memory");
    } else {
        eprintln!(
            "a_failure_settles_queued_work_before_its_buffers_are_reused: the pool gave the new buffer other memory \
             (tests running beside it); the check below still holds, but did not exercise the reuse"
        );
    }
    let back = y.to_host(n, &other).unwrap();
    if let Some(i) = back.iter().zip(&pattern).position(|(a, b)| a != b) {
        panic!(
            "scalar {i} of a new buffer was overwritten by work queued on the freed one before it"
        );
    }
}

#[test]
fn h_polynomial_matches_cpu() {
    if !gpu_or_skip("h_polynomial_matches_cpu", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("h_polynomial_matches_cpu");
    for log_n in 0..=20u32 {
        let n = 1usize << log_n;
        // The power of two, and a length that is not one (zero-padded like bellperson).
        check_h(n, &mut rng);
        if n > 2 {
            check_h(n - 3, &mut rng);
        }
    }
}

#[test]
#[ignore = "heavy sweep: 2^24 and 2^27; run with --ignored on the GPU machine"]
fn heavy_sweep_2_24_and_2_27() {
    if !gpu_or_skip("heavy_sweep_2_24_and_2_27", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("heavy_sweep_2_24_and_2_27");
    for log_n in [24u32, 27] {
        let cpu = Domain::new(log_n).unwrap();
        let n = cpu.size();
        // Where the sweep's time goes (its CPU references are most of it), printed at the end of each size.
        let (mut cpu_s, mut gpu_s) = (0.0, 0.0);
        let timed = |acc: &mut f64, f: &mut dyn FnMut()| {
            let t = Instant::now();
            f();
            *acc += t.elapsed().as_secs_f64();
        };
        let t = Instant::now();
        let input = par_scalars(n, &mut rng, |r, i| Scalar::from(i as u64 ^ r.gen::<u64>()));
        let inputs_s = t.elapsed().as_secs_f64();
        let stream = Stream::new().unwrap();
        let domain = GpuDomain::new(log_n).unwrap();
        // Forward, and inverse (scaled in its last pass's stores), natural to natural order; the inverse on H's
        // coset too (its scaling partly in the last pass's twiddles).
        let on_gpu = |direction, coset: Option<&Scalar>| {
            let mut d = DeviceScalars::from_host_padded(&input, n, &stream).unwrap();
            domain
                .ntt(
                    &mut d,
                    1,
                    direction,
                    Order::Natural,
                    Order::Natural,
                    coset,
                    &stream,
                )
                .unwrap();
            d.to_host(n, &stream).unwrap()
        };
        let g = coset_generator();
        type CpuNtt<'a> = &'a dyn Fn(&mut [Scalar]) -> ntt_cuda::Result<()>;
        let cases: [(&str, Direction, Option<&Scalar>, CpuNtt); 3] = [
            ("forward NTT", Direction::Forward, None, &|v| cpu.fft(v)),
            ("inverse NTT", Direction::Inverse, None, &|v| cpu.ifft(v)),
            ("inverse coset NTT", Direction::Inverse, Some(&g), &|v| {
                cpu.icoset_fft(v, g)
            }),
        ];
        for (name, direction, coset, on_cpu) in cases {
            let mut expect = input.clone();
            timed(&mut cpu_s, &mut || on_cpu(&mut expect).unwrap());
            let mut got = Vec::new();
            timed(&mut gpu_s, &mut || got = on_gpu(direction, coset));
            assert!(got == expect, "{name} 2^{log_n} differs");
        }
        let t = Instant::now();
        let h_cpu_s = check_h(n - 5, &mut rng);
        eprintln!(
            "2^{log_n}: NTT, inverse NTT (plain and on a coset) and H agree with the CPU (inputs {inputs_s:.1} s; \
             the transforms on the CPU {cpu_s:.1} s, on the GPU with copies {gpu_s:.1} s; H's check {:.1} s, its CPU \
             reference {h_cpu_s:.1} s)",
            t.elapsed().as_secs_f64()
        );
    }
}

#[test]
fn no_device_is_a_clear_error_when_forced() {
    // With CUZK_NO_GPU=1 in this process (it is read once), every entry point must say so; here we only check the
    // error type's message on whatever this machine has.
    match gpu::device() {
        Ok(name) => assert!(!name.is_empty()),
        Err(e) => assert!(e.to_string().starts_with("no GPU: "), "{e}"),
    }
}
