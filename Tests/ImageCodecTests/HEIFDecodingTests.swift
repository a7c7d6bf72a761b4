import Foundation
import Testing
import TestSupport
@testable import ImageCodec

@Suite("HEIC and AVIF decoding")
struct HEIFDecodingTests {
    struct Fixture: Sendable, CustomTestStringConvertible {
        var name: String
        var format: ImageFormat
        var width: Int
        var height: Int
        var alpha: Bool
        var bits: Int
        var testDescription: String { name }
    }

    static let fixtures = [
        Fixture(name: "kite.heic", format: .heic, width: 480, height: 300, alpha: false, bits: 8),
        Fixture(name: "kite.avif", format: .avif, width: 480, height: 300, alpha: false, bits: 8),
        Fixture(name: "kite-10bit.heic", format: .heic, width: 480, height: 300, alpha: false, bits: 10),
        Fixture(name: "kite-10bit.avif", format: .avif, width: 480, height: 300, alpha: false, bits: 10),
        Fixture(name: "calla-alpha.heic", format: .heic, width: 240, height: 156, alpha: true, bits: 8),
        Fixture(name: "calla-alpha.avif", format: .avif, width: 240, height: 156, alpha: true, bits: 8)
    ]

    @Test("the header without decoding pixels, and the pixels the library's own tool gives (heif-convert, avifdec)", arguments: fixtures)
    func headerAndPixels(_ fixture: Fixture) throws {
        let data = try HEIFFixtures.data(fixture.name)
        #expect(try ImageFormat.sniff(data) == fixture.format)
        let header = try ImageDecoder.header(of: data)
        #expect(header.format == fixture.format && (header.width, header.height) == (fixture.width, fixture.height))
        #expect(header.hasAlpha == fixture.alpha && header.bitDepth == fixture.bits && header.orientation == .up)
        // As decoded, without colour management: heif-convert writes no profile.
        let bitmap = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(data)
        let reference = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(
            fixture.format == .avif ? try HEIFFixtures.avifdec(fixture.name) : try HEIFFixtures.heifConvert(fixture.name))
        #expect(bitmap.format == (fixture.alpha ? .rgba : .rgb) && (bitmap.width, bitmap.height) == (reference.width, reference.height))
        #expect(bitmap.format == reference.format)
        let original = try ImageDecoder().decode(fixture.alpha ? try WebPFixtures.data("calla-alpha.png") : try SmallPhotos.data("kite.jpg"))
        if fixture.format == .heic && !fixture.alpha && fixture.bits == 8 {
            // libheif's planes, converted by the engine (see planarHEIC): heif-convert repeats
            // each chroma sample where the engine interpolates, so they differ at colour edges,
            // and the engine's is the nearer to the photo.
            #expect(TestImages.meanDifference(bitmap, reference) < 0.5)
            #expect(TestImages.meanDifference(bitmap, original) < TestImages.meanDifference(reference, original))
        } else {
            // heif-convert keeps 10 bits in a 16-bit PNG, which the engine then rounds to 8;
            // avifdec converts to 8 bits as the engine's libavif does.
            #expect(TestImages.maxDifference(bitmap, reference) <= (fixture.bits > 8 && fixture.format == .heic ? 1 : 0))
        }
        // And they are the photo they were made from.
        #expect(TestImages.meanDifference(bitmap, original) < (fixture.alpha ? 8 : 4))
    }

    @Test(
        "irot and imir, as libheif applies them: the upright size, the pixels heif-convert gives, the EXIF orientation they equal, and a fill's gravity on the upright image",
        arguments: [
            ("small-irot-1.heic", ExifOrientation.left), ("small-irot-2.heic", .down), ("small-irot-3.heic", .right),
            ("small-imir-0.heic", .downMirrored), ("small-imir-1.heic", .upMirrored), ("small-irot-1-imir-0.heic", .leftMirrored),
            ("small-irot-3-imir-0.heic", .rightMirrored)
        ])
    func transformations(_ name: String, _ orientation: ExifOrientation) throws {
        let data = try HEIFFixtures.data(name)
        let header = try ImageDecoder.header(of: data)
        #expect(header.orientation == .up && (header.width, header.height) == (orientation.swapsDimensions ? (60, 96) : (96, 60)))
        let upright = try ImageDecoder().decode(data)
        let reference = try ImageDecoder().decode(try HEIFFixtures.heifConvert(name))
        let stored = try ImageDecoder().decode(try HEIFFixtures.data("small.heic"))
        #expect((upright.width, upright.height) == (header.width, header.height))
        // libheif turns the planes; the engine converts them (heif-convert repeats chroma
        // where it interpolates, and a turned 4:2:0 image keeps the siting of the stored one):
        // the same picture, to about a level on average on this 96×60 image, where colour edges
        // are many. A wrong turn is tens of levels.
        #expect(TestImages.meanDifference(upright, reference) < 1.5, "\(TestImages.meanDifference(upright, reference))")
        let turned = try stored.applying(orientation)
        #expect(TestImages.meanDifference(upright, turned) < 1.5, "\(TestImages.meanDifference(upright, turned))")
        let fill = DecodingOptions(resize: .fill(width: 40, height: 20, gravity: .north))
        let top = try ImageDecoder(options: fill).decode(data)
        #expect(TestImages.maxDifference(top, try ImageDecoder(options: fill).decode(try ImageEncoder.png(upright))) == 0)
    }

    @Test(
        "AVIF's irot, imir and clap, which libavif leaves to the engine: the upright size, the coded pixels (avifdec) cropped and turned, what libheif's heif-convert shows, and a fill's gravity on the upright image",
        arguments: [
            ("small-irot-1.avif", ExifOrientation.left, nil), ("small-irot-3-imir-0.avif", .rightMirrored, nil),
            ("small-imir-1.avif", .upMirrored, nil),
            // clap 64×40, its centre 8 px left of and 4 px below the image's: x 8, y 14.
            ("small-clap-irot-1.avif", .left, [8, 14, 64, 40])
        ] as [(String, ExifOrientation, [Int]?)])
    func avifTransformations(_ name: String, _ orientation: ExifOrientation, _ crop: [Int]?) throws {
        let data = try HEIFFixtures.data(name)
        let header = try ImageDecoder.header(of: data)
        let stored = (crop?[2] ?? 96, crop?[3] ?? 60)
        #expect(header.orientation == .up && (header.width, header.height) == (orientation.swapsDimensions ? (stored.1, stored.0) : stored))
        // A HEIF transformation is part of the image: applied even when EXIF orientation is not.
        for options in [DecodingOptions(), DecodingOptions(appliesOrientation: false)] {
            let upright = try ImageDecoder(options: options).decode(data)
            let coded = try ImageDecoder().decode(try HEIFFixtures.avifdec("small.avif"))
            let (x, y) = (crop?[0] ?? 0, crop?[1] ?? 0)
            var pixels: [UInt8] = []
            for row in y..<(y + stored.1) { pixels += coded.pixels[(row * 96 + x) * 3..<(row * 96 + x + stored.0) * 3] }
            let expected = try Bitmap(width: stored.0, height: stored.1, format: .rgb, pixels: pixels).applying(orientation)
            #expect(upright.pixels == expected.pixels && (upright.width, upright.height) == (header.width, header.height))
            // libheif applies the same transformations itself; its YUV conversion differs a little.
            let libheif = try ImageDecoder().decode(try HEIFFixtures.heifConvert(name))
            #expect((libheif.width, libheif.height) == (upright.width, upright.height))
            #expect(TestImages.meanDifference(upright, libheif) < 2, "\(TestImages.meanDifference(upright, libheif))")
        }
        let fill = DecodingOptions(resize: .fill(width: 30, height: 20, gravity: .north))
        let upright = try ImageDecoder().decode(data)
        #expect(
            TestImages.maxDifference(
                try ImageDecoder(options: fill).decode(data), try ImageDecoder(options: fill).decode(try ImageEncoder.png(upright))) == 0)
    }

    @Test(
        "8-bit 4:2:0 and 4:4:4 HEIC: libheif's own planes, converted by the matrix the file names (BT.601 at full range without one), chroma interpolated: within a level of H.273's equations worked in doubles on the same planes, and close to heif-convert",
        arguments: [
            ("kite.heic", 1, 6, true), ("kite-444.heic", 3, 6, true), ("kite-bt709-narrow.heic", 1, 1, false),
            ("small-irot-1.heic", 1, 6, true), ("kite-p3.heic", 1, 6, true)
        ])
    func planarHEIC(_ name: String, _ chroma: Int, _ matrixCoefficients: Int, _ fullRange: Bool) throws {
        let data = try HEIFFixtures.data(name)
        let source = try ImageSource(data: data)
        guard case .heif(let layout) = source.layout, let planar = layout.planar else {
            Issue.record("\(name) is not decoded from planes")
            return
        }
        #expect(planar == HEIFDecoder.PlanarDecode(chroma: chroma, matrixCoefficients: matrixCoefficients, fullRange: fullRange))
        let decoded = try source.decode(DecodingOptions(colorManagement: .preserveSource)).bitmap
        let (kr, kb) = matrixCoefficients == 1 ? (0.2126, 0.0722) : (0.299, 0.114)
        let expected = try data.withUnsafeBytes { (bytes) throws(ImageCodecError) -> [UInt8] in
            let reader = try HEIFReader(bytes: bytes, limits: DecodingLimits())
            return try reader.decodePlanes(chroma: chroma, maxSide: 1 << 16) { (planes, _) throws(ImageCodecError) -> [UInt8] in
                #expect((planes.width, planes.height) == (decoded.width, decoded.height))
                return Self.equations(planes, kr: kr, kb: kb, fullRange: fullRange)
            }
        }
        let worst = zip(decoded.pixels, expected).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 1, "\(name): \(worst) levels from the equations")
        // libheif 1.15 does not convert by the colour box's matrix on its own path (it reads
        // kite-bt709-narrow.heic as BT.601 at full range, near enough); the engine does, as
        // H.273 and the box say: heif-convert is a reference only where the two agree.
        guard matrixCoefficients == 6 else { return }
        let reference = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(try HEIFFixtures.heifConvert(name))
        // Without subsampling there is nothing to interpolate: only the rounding differs.
        if chroma == 3 { #expect(TestImages.maxDifference(decoded, reference) <= 1) }
        // Interpolated against repeated chroma: apart at colour edges, which a 96×60 image is
        // full of.
        let bound = decoded.width < 100 ? 1.5 : 0.5
        #expect(TestImages.meanDifference(decoded, reference) < bound, "\(TestImages.meanDifference(decoded, reference))")
    }

    /// H.273's YCbCr → RGB in doubles: chroma on the luma grid first (4:2:0: samples on the even
    /// columns and halfway between rows, linear in between, edges repeated), then the matrix.
    static func equations(_ planes: YCbCrPlanes, kr: Double, kb: Double, fullRange: Bool) -> [UInt8] {
        let kg = 1 - kr - kb
        func sample(_ plane: UnsafePointer<UInt8>, _ stride: Int, _ x: Int, _ y: Int) -> Double {
            Double(plane[min(max(y, 0), planes.chromaHeight - 1) * stride + min(x, planes.chromaWidth - 1)])
        }
        func chroma(_ plane: UnsafePointer<UInt8>, _ stride: Int, _ x: Int, _ y: Int) -> Double {
            guard planes.subsampled else { return sample(plane, stride, x, y) }
            // The luma row's position among chroma rows: (y − ½) / 2.
            let position = (Double(y) - 0.5) / 2
            let row = Int(position.rounded(.down))
            let fraction = position - Double(row)
            func column(_ row: Int) -> Double {
                x % 2 == 0 ? sample(plane, stride, x / 2, row) : (sample(plane, stride, x / 2, row) + sample(plane, stride, x / 2 + 1, row)) / 2
            }
            return column(row) * (1 - fraction) + column(row + 1) * fraction
        }
        var rgb: [UInt8] = []
        for y in 0..<planes.height {
            for x in 0..<planes.width {
                var luma = Double(planes.luma[y * planes.lumaStride + x])
                var cb = chroma(planes.cb, planes.cbStride, x, y) - 128
                var cr = chroma(planes.cr, planes.crStride, x, y) - 128
                if !fullRange { (luma, cb, cr) = ((luma - 16) * 255 / 219, cb * 255 / 224, cr * 255 / 224) }
                let values = [luma + 2 * (1 - kr) * cr, luma - 2 * kb * (1 - kb) / kg * cb - 2 * kr * (1 - kr) / kg * cr, luma + 2 * (1 - kb) * cb]
                rgb += values.map { UInt8(min(255, max(0, $0.rounded()))) }
            }
        }
        return rgb
    }

    @Test(
        "4:2:2, a clean aperture (cropped at an odd offset) and 10 bits stay with libheif's own RGB: the pixels heif-convert gives",
        arguments: ["kite-422.heic", "small-clap.heic", "kite-10bit.heic"])
    func libheifConversion(_ name: String) throws {
        let source = try ImageSource(data: try HEIFFixtures.data(name))
        guard case .heif(let layout) = source.layout else {
            Issue.record("not read as HEIF")
            return
        }
        #expect(layout.planar == nil)
        let options = DecodingOptions(colorManagement: .preserveSource)
        let reference = try ImageDecoder(options: options).decode(try HEIFFixtures.heifConvert(name))
        // heif-convert keeps 10 bits in a 16-bit PNG, which the engine then rounds to 8.
        #expect(TestImages.maxDifference(try source.decode(options).bitmap, reference) <= (name.contains("10bit") ? 1 : 0))
    }

    @Test("an ICC profile (Display P3) converts to sRGB as the same pixels in a tagged PNG do")
    func iccProfile() throws {
        let data = try HEIFFixtures.data("kite-p3.heic")
        let converted = try ImageDecoder().decodeImage(data)
        var raw = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(data)
        let p3 = try ColorFixtures.profile("DisplayP3.icc")
        #expect(converted.warnings.isEmpty && raw.iccProfile == p3)
        raw.iccProfile = p3
        let viaPNG = try ImageDecoder().decode(try ImageEncoder.png(raw))
        #expect(TestImages.meanDifference(converted.bitmap, raw) > 1 && TestImages.maxDifference(converted.bitmap, viaPNG) == 0)
    }

    @Test(
        "premultiplied alpha (prem) comes out straight: the colour of translucent pixels is the photo's (libheif divides in Swift, libavif itself)",
        arguments: ["heic", "avif"])
    func premultipliedAlpha(_ format: String) throws {
        let original = try ImageDecoder().decode(try WebPFixtures.data("calla-alpha.png"))
        let straight = try ImageDecoder().decode(try HEIFFixtures.data("calla-alpha.\(format)"))
        let premultiplied = try ImageDecoder().decode(try HEIFFixtures.data("calla-premultiplied.\(format)"))
        // Colour error on pixels at least a quarter opaque (below that, division amplifies the
        // codec's error, and nothing shows it).
        func colourError(_ image: Bitmap) -> (mean: Double, pixels: Int) {
            var (total, count) = (0, 0)
            for y in 0..<original.height {
                for x in 0..<original.width where original.pixel(x: x, y: y).last! >= 64 {
                    let (a, b) = (Array(image.pixel(x: x, y: y)), Array(original.pixel(x: x, y: y)))
                    total += (0..<3).map { abs(Int(a[$0]) - Int(b[$0])) }.reduce(0, +)
                    count += 3
                }
            }
            return (Double(total) / Double(count), count / 3)
        }
        let (error, pixels) = colourError(premultiplied)
        let reference = colourError(straight).mean
        #expect(pixels > 10_000 && premultiplied.format == .rgba)
        // Measured on the HEIC: 2.5 levels against the straight file's 1.7; left premultiplied,
        // 59. The straight file is held to it too: a decoder that premultiplied both would
        // otherwise pass.
        #expect(reference < 4, "the straight file: \(reference) levels off")
        #expect(error < reference + 2, "premultiplied file: \(error) levels off; the straight file: \(reference)")
    }

    @Test("nclx colour (Display P3 primaries, sRGB transfer) converts to sRGB as a Display P3 ICC profile does")
    func nclxDisplayP3() throws {
        let data = try HEIFFixtures.data("kite-p3-nclx.avif")
        let converted = try ImageDecoder().decodeImage(data)
        var raw = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(data)
        // The profile built from the code points travels with the unconverted pixels.
        #expect(converted.warnings.isEmpty && raw.iccProfile != nil, "\(converted.warnings)")
        raw.iccProfile = try ColorFixtures.profile("DisplayP3.icc")
        let viaPNG = try ImageDecoder().decode(try ImageEncoder.png(raw))
        #expect(TestImages.meanDifference(converted.bitmap, raw) > 1)
        #expect(TestImages.maxDifference(converted.bitmap, viaPNG) <= 1)
    }

    @Test("PQ (BT.2020, ST 2084) is tone-mapped: reference white near the top, 1000 cd/m² at 255, black at 0")
    func nclxPerceptualQuantizer() throws {
        // Gray bands encoded at 0, 100, 203 and 1000 cd/m² as 8-bit PQ signals (0, 130, 148, 192).
        let image = try ImageDecoder().decode(try HEIFFixtures.data("pq-bands.avif"))
        func eotf(_ signal: Double) -> Double {
            let (m1, m2, c1, c2, c3) = (2610.0 / 16384, 2523.0 / 4096 * 128, 3424.0 / 4096, 2413.0 / 4096 * 32, 2392.0 / 4096 * 32)
            let power = pow(signal, 1 / m2)
            return pow(max(power - c1, 0) / (c2 - c3 * power), 1 / m1) * 10_000
        }
        func expected(_ signal: Int) -> Int {
            let linear = eotf(Double(signal) / 255) / 203
            let mapped = linear <= 0.8 ? linear : 0.8 + 0.2 * (1 - exp(-(linear - 0.8) / 0.2))
            let encoded = mapped <= 0.0031308 ? 12.92 * mapped : 1.055 * pow(mapped, 1 / 2.4) - 0.055
            return Int((encoded * 255).rounded())
        }
        for (band, signal) in [0, 130, 148, 192].enumerated() {
            let pixel = image.pixel(x: band * 64 + 32, y: 32)
            let want = expected(signal)
            #expect(pixel.allSatisfy { abs(Int($0) - want) <= 3 }, "band \(band): \(pixel), expected \(want)")
        }
        #expect(expected(148) >= 240 && expected(192) == 255 && expected(130) < 200)
    }

    @Test(
        "every resize mode: the planned size, and the pixels of the full decode resampled",
        arguments: [
            Resize.fit(width: 160, height: 160), .fill(width: 120, height: 120, gravity: .east), .fillDown(width: 600, height: 200),
            .force(width: 100, height: 50)
        ])
    func resizeModes(_ resize: Resize) throws {
        for name in ["kite.heic", "kite.avif"] {
            let data = try HEIFFixtures.data(name)
            let decoder = ImageDecoder(options: DecodingOptions(resize: resize))
            let plan = try decoder.plan(data)
            let bitmap = try decoder.decode(data)
            #expect((bitmap.width, bitmap.height) == (plan.width, plan.height))
            let full = try ImageDecoder().decode(data)
            let reference = try ImageDecoder(options: DecodingOptions(resize: resize)).decode(try ImageEncoder.png(full))
            #expect(TestImages.maxDifference(bitmap, reference) == 0, "\(name)")
            #expect(plan.memoryBytes > full.pixels.count, "the plan counts the full-size decode")
        }
    }

    @Test("an AVIF's plan covers what libavif and dav1d were measured to hold, at each subsampling and depth, without libaom's two-byte samples")
    func avifPlanCoversMeasuredDecodes() throws {
        // Peak RSS of `avifdec -c dav1d -j 1 --info` (which decodes, without converting to RGB)
        // over its RSS on a 96×60 file, on lomiri-4K (4096×2304) encoded by avifenc.
        let (width, height) = (4096, 2304)
        let measured: [(quarters: Int, bits: Int, bytes: Int)] = [
            (6, 8, 14_796_000), (12, 8, 31_064_000), (6, 10, 31_152_000), (12, 10, 58_828_000)
        ]
        for (quarters, bits, bytes) in measured {
            let header = ImageHeader(
                format: .avif, width: width, height: height, orientation: .up, hasAlpha: false, bitDepth: bits, colorModel: .rgb,
                progressive: false)
            let avif = HEIFDecoder.AVIFLayout(
                codedWidth: width, codedHeight: height, quarterSamplesPerPixel: quarters, cropX: 0, cropY: 0, cropWidth: width,
                cropHeight: height, orientation: .up)
            let layout = HEIFDecoder.Layout(
                fileBytes: 0, lumaBits: bits, hasICCProfile: false, premultipliedAlpha: false, nclx: .sRGB, codedImages: 1,
                largestCodedPixels: width * height, declaredSide: width, library: .libavif(avif))
            let planned = HEIFDecoder.libraryBytes(header, layout, channels: 3)
            let rgb = width * height * 3
            #expect(planned >= bytes + rgb, "\(quarters)/4 samples, \(bits) bits: \(planned) planned")
            // Not libaom's plan, which counted three pictures at two bytes a sample whatever the
            // depth (21 bytes a pixel here): film grain's copy and the state on top of what was
            // measured, no more.
            #expect(planned < 2 * bytes + rgb + (8 << 20) + width * height, "\(quarters)/4 samples, \(bits) bits: \(planned) planned")
        }
        // The fixtures' own plans: kite.avif is 4:2:0, 8 bits, one coded image.
        let kite = try ImageDecoder().plan(try HEIFFixtures.data("kite.avif"))
        #expect(kite.memoryBytes >= 480 * 300 * (2 * 3 / 2 + 1 + 3) + (8 << 20))
    }

    @Test("truncated and corrupt files and files over the limits: typed errors")
    func badFiles() throws {
        let data = try HEIFFixtures.data("kite.heic")
        for cut in [data.prefix(12), data.prefix(200), data.prefix(data.count - 100)] {
            #expect {
                try ImageDecoder().decode(cut)
            } throws: { error in
                switch error as? ImageCodecError {
                case .truncatedData, .corruptData: true
                default: false
                }
            }
        }
        // AVIFs the heif-decode fuzzer found when libheif decoded AVIF (their first byte is its
        // selector). libheif's dav1d path leaked on the first two, and papered over the third's
        // damage with a warning whose text it had freed. Through libavif: the first decodes
        // (libavif reads its colour as unspecified, which is sRGB); the other two are corrupt,
        // with or without partial images allowed (libavif papers over nothing).
        let regressions = FuzzInputs.root.appendingPathComponent("Tests/Fixtures/fuzz-regressions/heif-decode")
        let unknownPrimaries = try Data(contentsOf: regressions.appendingPathComponent("nclx-unknown-primaries-dav1d-leak")).dropFirst()
        let decoded = try ImageDecoder().decodeImage(unknownPrimaries)
        #expect((decoded.bitmap.width, decoded.bitmap.height) == (240, 156) && decoded.warnings.isEmpty)
        for (name, reason) in [("dav1d-error-leak", "Primary item not found"), ("warning-message-use-after-free", "isn't type 'infe'")] {
            let damaged = try Data(contentsOf: regressions.appendingPathComponent(name)).dropFirst()
            for options in [DecodingOptions(), DecodingOptions(allowsPartialImages: true)] {
                #expect {
                    try ImageDecoder(options: options).decode(damaged)
                } throws: { error in
                    guard case .corruptData(let message) = error as? ImageCodecError else { return false }
                    return message.hasPrefix("libavif parse: ") && message.contains(reason)
                }
            }
        }
        // An overlay whose own canvas is far larger than the 96×64 it declares (libheif
        // allocated 808 MB for it): refused by the container walk, before libheif reads it.
        let overlay = try Data(contentsOf: regressions.appendingPathComponent("overlay-canvas-808MB")).dropFirst()
        #expect {
            try ImageDecoder().decode(overlay)
        } throws: { error in
            guard case .limitExceeded(let message) = error as? ImageCodecError else { return false }
            return message.hasPrefix("HEIF: ")
        }
        var limits = DecodingLimits()
        limits.maxPixelCount = 100_000
        #expect(throws: ImageCodecError.tooLarge(width: 480, height: 300, limit: 100_000)) { try ImageDecoder.header(of: data, limits: limits) }
        // An MP4's ftyp is not HEIF.
        let mp4 = Data([0, 0, 0, 24] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8))
        #expect(throws: ImageCodecError.unsupportedFormat(.unknown)) { try ImageFormat.sniff(mp4) }
        let bitmap = try ImageDecoder().decode(data)
        #expect(throws: ImageCodecError.invalidArgument("HEIC is read, not written: encode as JPEG, PNG, WebP or AVIF")) {
            try ImageEncoder.encode(bitmap, as: .heic)
        }
    }
}
