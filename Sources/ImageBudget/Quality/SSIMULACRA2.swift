import CImageKernels
import Foundation
import ImageCodec

/// SSIMULACRA 2.1 (Jon Sneyers, Cloudinary; libjxl `tools/ssimulacra2.cc`): a colour-aware,
/// multi-scale metric on a 0-100 scale (90 ≈ visually lossless, 70 high, 50 medium, 30 low).
///
/// Both images go sRGB → linear light → JPEG XL's XYB, shifted positive. At six scales (2×2
/// averages in linear light between them) and for each of X, Y and B it computes three maps —
/// SSIM without the luminance term, "artefacts" (edges in the distorted image where the
/// original is smooth: ringing, blocking, banding) and "detail lost" (the reverse: blur) —
/// and pools each map by its mean and its 4-norm. A weighted sum of those 108 figures is
/// mapped to the score. The Gaussian σ 1.5 and its borders (zero beyond the left and right
/// edges, mirrored beyond the top and bottom), and the partial 2×2 blocks at odd edges, are
/// those of the PyPI `ssimulacra2` package, which outside checks use; committed fixtures
/// hold the two within ±1.0.
///
/// When one reference is compared with many candidates (the budget search), `Reference`
/// keeps its per-scale planes and filtered statistics, so each comparison filters three
/// quantities per channel, not five.
public enum SSIMULACRA2 {
    static let scaleCount = 6
    fileprivate static let c2: Float = 0.0009

    /// A reference image with, per scale, its XYB planes and their Gaussian mean and mean square.
    public struct Reference: Sendable {
        /// Width of the image, in pixels.
        public let width: Int
        /// Height of the image, in pixels.
        public let height: Int
        let scales: [Scale]

        struct Scale: Sendable {
            let xyb: ColorPlanes
            let mean: ColorPlanes
            let meanSquare: ColorPlanes
        }

        /// Prepares `bitmap` (sRGB; alpha composited over white) as a reference.
        public init(_ bitmap: Bitmap) throws(ImageCodecError) {
            var planes = try ColorPlanes(linearRGBOf: bitmap)
            (width, height) = (planes.width, planes.height)
            let count = SSIMULACRA2.scales(width: width, height: height)
            var scales: [Scale] = []
            for scale in 0..<count {
                // The next scale averages linear light, so it is made before this one turns XYB.
                let next = scale + 1 < count ? planes.halved() : nil
                planes.convertToPositiveXYB()
                let xyb = planes
                var blur = PlaneBlur(width: xyb.width, height: xyb.height)
                // Planes no weight reads are left unwritten (see `MapNeeds`).
                var mean = ColorPlanes(width: xyb.width, height: xyb.height)
                var meanSquare = mean
                for plane in 0..<3 {
                    let needs = MapNeeds(channel: plane, scale: scale, scaleCount: count)
                    if needs.any { blur.blur(xyb.planes[plane], into: &mean.planes[plane]) }
                    if needs.ssim { blur.blur(xyb.planes[plane], times: xyb.planes[plane], into: &meanSquare.planes[plane]) }
                }
                scales.append(Scale(xyb: xyb, mean: mean, meanSquare: meanSquare))
                if let next { planes = next }
            }
            self.scales = scales
        }
    }

    /// How many scales an image of this size has: the full size, then each 2×2 halving
    /// (rounded up) while both sides stay at least 8, at most `scaleCount`.
    static func scales(width: Int, height: Int) -> Int {
        var (width, height, count) = (width, height, 0)
        while count < scaleCount && width >= 8 && height >= 8 {
            count += 1
            (width, height) = ((width + 1) / 2, (height + 1) / 2)
        }
        return count
    }

    /// Which maps of one channel at one scale carry a weight. A third of the 108 published
    /// weights are zero; where a channel's SSIM map has none (X and B at full size, where a
    /// score spends three quarters of its time), its two variance blurs are skipped, and where
    /// nothing has one (Y at the sixth scale) the channel is. Skipping adds exact zeros: the
    /// score is unchanged.
    struct MapNeeds {
        var ssim: Bool
        var edges: Bool
        var any: Bool { ssim || edges }

        /// Weight indices as `mapped` reads them: channel by channel, scale by scale, then
        /// (mean, 4-norm) × (SSIM, artefacts, detail lost).
        init(channel: Int, scale: Int, scaleCount: Int) {
            let base = (channel * scaleCount + scale) * 6
            let w = SSIMULACRA2.weights
            ssim = w[base] != 0 || w[base + 3] != 0
            edges = w[base + 1] != 0 || w[base + 2] != 0 || w[base + 4] != 0 || w[base + 5] != 0
        }
    }

    /// The score of `distorted` against `reference`; both sRGB and the same size. 100 means
    /// identical; lower is worse (it can go below 0 for a very bad image).
    public static func score(_ reference: Bitmap, _ distorted: Bitmap) throws(ImageCodecError) -> Double {
        try score(Reference(reference), distorted)
    }

    /// The score of `distorted` against a prepared reference of the same size.
    public static func score(_ reference: Reference, _ distorted: Bitmap) throws(ImageCodecError) -> Double {
        var planes = try ColorPlanes(linearRGBOf: distorted)
        precondition(planes.width == reference.width && planes.height == reference.height, "SSIMULACRA2 needs images of one size")
        // Per scale and channel: SSIM, artefact and detail-lost maps, each as (mean, 4-norm).
        var pooled: [[MapPooling]] = []
        for (index, scale) in reference.scales.enumerated() {
            // The next scale averages linear light, so it is made before this one turns XYB.
            let next = index + 1 < reference.scales.count ? planes.halved() : nil
            planes.convertToPositiveXYB()
            let xyb = planes
            var blur = PlaneBlur(width: xyb.width, height: xyb.height)
            var (mean, meanSquare, product) = ([Float](), [Float](), [Float]())
            var channels: [MapPooling] = []
            for plane in 0..<3 {
                let needs = MapNeeds(channel: plane, scale: index, scaleCount: reference.scales.count)
                guard needs.any else {
                    channels.append(MapPooling())
                    continue
                }
                blur.blur(xyb.planes[plane], into: &mean)
                if needs.ssim {
                    blur.blur(xyb.planes[plane], times: xyb.planes[plane], into: &meanSquare)
                    blur.blur(scale.xyb.planes[plane], times: xyb.planes[plane], into: &product)
                }
                channels.append(
                    MapPooling(
                        reference: (scale.xyb.planes[plane], scale.mean.planes[plane], scale.meanSquare.planes[plane]),
                        distorted: (xyb.planes[plane], mean, meanSquare), product: product, width: xyb.width,
                        ssim: needs.ssim))
            }
            pooled.append(channels)
            if let next { planes = next }
        }
        return mapped(pooled)
    }

    /// The weighted sum of the pooled maps, mapped to the 0-100 scale. Weights run channel by
    /// channel, scale by scale, norm by norm (SSIM, artefacts, detail lost); an image too small
    /// for six scales uses the first weights in that order, as the reference does.
    static func mapped(_ pooled: [[MapPooling]]) -> Double {
        var sum = 0.0
        var index = 0
        for channel in 0..<3 {
            for scale in pooled.indices {
                let maps = pooled[scale][channel]
                for norm in 0..<2 {
                    sum += weights[index] * abs(maps.ssim[norm])
                    sum += weights[index + 1] * abs(maps.artefact[norm])
                    sum += weights[index + 2] * abs(maps.detailLost[norm])
                    index += 3
                }
            }
        }
        let scaled = sum * 0.9562382616834844
        let curved = 2.326765642916932 * scaled - 0.020884521182843837 * scaled * scaled + 6.248496625763138e-05 * scaled * scaled * scaled
        return curved > 0 ? 100 - 10 * pow(curved, 0.6276336467831387) : 100
    }

    /// The 108 published weights of SSIMULACRA 2.1.
    static let weights: [Double] = [
        0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0,
        0.0, 0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271, 0.00015231632783718752,
        0.0, 0.0016406437456599754, 0.0, 1.8422455520539298, 11.441172603757666, 0.0,
        0.0007989109436015163, 0.000176816438078653, 0.0, 1.8787594979546387, 10.94906990605142, 0.0,
        0.0007289346991508072, 0.9677937080626833, 0.0, 0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053,
        0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398, 0.0, 0.0,
        0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
        0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
        225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
        176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408,
        0.0, 0.0, 0.0, 34.77906344483772, 44.835625328877896, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0008680556573291698, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0,
        0.0020827005846636437, 0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0,
        95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379,
        0.0, 0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537
    ]

    /// One channel at one scale: the three maps, each pooled as (mean, 4-norm).
    struct MapPooling {
        var ssim = [0.0, 0.0]
        var artefact = [0.0, 0.0]
        var detailLost = [0.0, 0.0]

        typealias Statistics = (plane: [Float], mean: [Float], meanSquare: [Float])

        /// Maps no weight reads: all zero.
        init() {}

        /// Without `withSSIM` the SSIM map is not computed (it stays zero) and the variance
        /// planes (`meanSquare`, `product`) are not read.
        init(reference: Statistics, distorted: Statistics, product: [Float], width: Int, ssim withSSIM: Bool) {
            let count = reference.plane.count
            var sums = [Double](repeating: 0, count: 6)
            // Unread stand-ins when the SSIM map is skipped (its blurs were).
            let (s11Plane, s22Plane, s12Plane) =
                withSSIM ? (reference.meanSquare, distorted.meanSquare, product) : (reference.mean, distorted.mean, distorted.mean)
            reference.plane.withUnsafeBufferPointer { x1 in
                reference.mean.withUnsafeBufferPointer { mu1 in
                    s11Plane.withUnsafeBufferPointer { s11 in
                        distorted.plane.withUnsafeBufferPointer { x2 in
                            distorted.mean.withUnsafeBufferPointer { mu2 in
                                s22Plane.withUnsafeBufferPointer { s22 in
                                    s12Plane.withUnsafeBufferPointer { s12 in
                                        // Row by row: float lanes within a row, doubles across rows.
                                        var start = 0
                                        while start < count {
                                            let end = Swift.min(count, start + width)
                                            let row = Self.rowSums(
                                                x1.baseAddress!, mu1.baseAddress!, s11.baseAddress!, x2.baseAddress!,
                                                mu2.baseAddress!, s22.baseAddress!, s12.baseAddress!, start, end, ssim: withSSIM)
                                            for term in 0..<6 { sums[term] += Double(row[term]) }
                                            start = end
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            let perPixel = 1 / Double(count)
            ssim = [sums[0] * perPixel, pow(sums[1] * perPixel, 0.25)]
            artefact = [sums[2] * perPixel, pow(sums[3] * perPixel, 0.25)]
            detailLost = [sums[4] * perPixel, pow(sums[5] * perPixel, 0.25)]
        }

        /// Sums over pixels start..<end of d, d⁴ for the SSIM map (zero without `ssim`), the
        /// artefact map and the detail-lost map: eight lane sums each from
        /// `iec_ssimulacra2_row_lanes` (on the CPU's widest version), added up, then the last
        /// few pixels one at a time through `iec_ssimulacra2_pixel`, the same definition. The
        /// order is fixed on every CPU.
        private static func rowSums(
            _ x1: UnsafePointer<Float>, _ mu1: UnsafePointer<Float>, _ s11: UnsafePointer<Float>,
            _ x2: UnsafePointer<Float>, _ mu2: UnsafePointer<Float>, _ s22: UnsafePointer<Float>,
            _ s12: UnsafePointer<Float>, _ start: Int, _ end: Int, ssim withSSIM: Bool
        ) -> SIMD8<Float> {
            typealias Lanes = SIMD8<Float>
            // Six vectors of lane sums, in the kernel's order.
            var lanes = (Lanes(), Lanes(), Lanes(), Lanes(), Lanes(), Lanes())
            let summed = withUnsafeMutableBytes(of: &lanes) { lanes in
                iec_ssimulacra2_row_lanes(
                    x1 + start, mu1 + start, s11 + start, x2 + start, mu2 + start, s22 + start, s12 + start, end - start,
                    withSSIM ? 1 : 0, SSIMULACRA2.c2, lanes.baseAddress!.assumingMemoryBound(to: Float.self))
            }
            // Lanes 0-5: the six sums (a vector, not an array: one allocation per row added up).
            var sums = SIMD8<Float>(lanes.0.sum(), lanes.1.sum(), lanes.2.sum(), lanes.3.sum(), lanes.4.sum(), lanes.5.sum(), 0, 0)
            var terms = SIMD8<Float>()
            for index in (start + summed)..<end {
                withUnsafeMutableBytes(of: &terms) { terms in
                    iec_ssimulacra2_pixel(
                        x1[index], mu1[index], s11[index], x2[index], mu2[index], s22[index], s12[index], withSSIM ? 1 : 0,
                        SSIMULACRA2.c2, terms.baseAddress!.assumingMemoryBound(to: Float.self))
                }
                // Without the SSIM map its two sums are left as they are.
                for term in (withSSIM ? 0 : 2)..<6 { sums[term] += terms[term] }
            }
            return sums
        }
    }
}
