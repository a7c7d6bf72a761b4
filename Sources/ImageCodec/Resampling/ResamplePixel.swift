import CImageKernels

/// What the resampler computes with: one gray sample (`Float`) or up to four channels
/// (`SIMD4<Float>`, alpha always in lane 3). Specialising on it keeps gray images from paying
/// for four lanes.
protocol ResamplePixel: Sendable {
    static var zero: Self { get }
    static func += (lhs: inout Self, rhs: Self)
    static func * (lhs: Float, rhs: Self) -> Self
    init(repeating: Float)
    /// Bytes of `format` → pixels, premultiplying alpha.
    static func load(_ row: UnsafePointer<UInt8>, width: Int, format: PixelFormat, into pixels: UnsafeMutablePointer<Self>)
    /// A row of `width` pixels → bytes of `format`, undoing premultiplication; Lanczos lobes
    /// overshoot, so values are clamped to 0...255 before rounding.
    static func store(_ row: UnsafePointer<Self>, width: Int, format: PixelFormat, to out: UnsafeMutablePointer<UInt8>)
    /// The horizontal pass over one row: output pixel x sums `counts[x]` taps (`taps` holds
    /// `stride` per output pixel) times the source pixels from `starts[x]`, in tap order.
    static func resampleRow(
        _ source: UnsafePointer<Self>, taps: UnsafePointer<Self>, starts: UnsafePointer<Int>, counts: UnsafePointer<Int>, stride: Int,
        into destination: UnsafeMutablePointer<Self>, width: Int)
}

extension Float: ResamplePixel {
    init(repeating value: Float) { self = value }

    static func resampleRow(
        _ source: UnsafePointer<Float>, taps: UnsafePointer<Float>, starts: UnsafePointer<Int>, counts: UnsafePointer<Int>, stride: Int,
        into destination: UnsafeMutablePointer<Float>, width: Int
    ) {
        iec_resample_horizontal1(source, taps, starts, counts, Int32(stride), destination, width)
    }

    static func load(_ row: UnsafePointer<UInt8>, width: Int, format: PixelFormat, into pixels: UnsafeMutablePointer<Float>) {
        for x in 0..<width { pixels[x] = Float(row[x]) }
    }

    static func store(_ row: UnsafePointer<Float>, width: Int, format: PixelFormat, to out: UnsafeMutablePointer<UInt8>) {
        var x = 0
        while x + 4 <= width {
            let bytes = SIMD4<Float>.bytes(UnsafeRawPointer(row + x).loadUnaligned(as: SIMD4<Float>.self))
            UnsafeMutableRawPointer(out + x).storeBytes(of: bytes, as: SIMD4<UInt8>.self)
            x += 4
        }
        while x < width {
            out[x] = SIMD4<Float>.bytes(SIMD4(repeating: row[x]))[0]
            x += 1
        }
    }
}

extension SIMD4: ResamplePixel where Scalar == Float {
    static func resampleRow(
        _ source: UnsafePointer<SIMD4<Float>>, taps: UnsafePointer<SIMD4<Float>>, starts: UnsafePointer<Int>, counts: UnsafePointer<Int>,
        stride: Int, into destination: UnsafeMutablePointer<SIMD4<Float>>, width: Int
    ) {
        // A SIMD4<Float> is four floats in a row (16 bytes, no padding), as the kernel reads them.
        iec_resample_horizontal4(
            UnsafeRawPointer(source).assumingMemoryBound(to: Float.self), UnsafeRawPointer(taps).assumingMemoryBound(to: Float.self), starts,
            counts, Int32(stride), UnsafeMutableRawPointer(destination).assumingMemoryBound(to: Float.self), width)
    }

    static func load(_ row: UnsafePointer<UInt8>, width: Int, format: PixelFormat, into pixels: UnsafeMutablePointer<SIMD4<Float>>) {
        switch format {
        case .gray:
            for x in 0..<width { pixels[x] = SIMD4(Float(row[x]), 0, 0, 0) }
        case .grayAlpha:
            for x in 0..<width {
                let alpha = Float(row[2 * x + 1])
                pixels[x] = SIMD4(Float(row[2 * x]) * alpha * (1 / 255), 0, 0, alpha)
            }
        case .rgb:
            // In CImageKernels (lane 3 is 0 and never used); exact, so the same on every path.
            iec_rgb_to_float4(row, width, UnsafeMutableRawPointer(pixels).assumingMemoryBound(to: Float.self))
        case .rgba:
            let raw = UnsafeRawPointer(row)
            for x in 0..<width {
                let pixel = SIMD4<Float>(raw.loadUnaligned(fromByteOffset: 4 * x, as: SIMD4<UInt8>.self))
                let alpha = pixel[3] * (1 / 255)
                pixels[x] = pixel * SIMD4(alpha, alpha, alpha, 1)
            }
        }
    }

    /// Rounded half up and clamped to bytes, as `UInt8(min(max(value + 0.5, 0), 255))` per
    /// lane (but exact: there, 0.5.nextDown + 0.5 rounds to 1), in vector instructions. Adding 1.5 × 2²³ to a value within ±2²² leaves it rounded
    /// to the nearest integer, ties to even, in the low mantissa bits, so the float's bits minus
    /// the constant's are that integer; a tie that went down is moved up. The clamp is written
    /// with shifts, which LLVM turns into two saturating packs. Swift's float-to-integer
    /// conversions check every lane and its min/max keep NaN rules, so both stayed branches or
    /// out-of-line calls (a tenth of the resampler's time). Values here stay within a few
    /// thousand.
    @inline(__always)
    static func bytes(_ value: SIMD4<Float>) -> SIMD4<UInt8> {
        let magic = SIMD4<Float>(repeating: 12_582_912)
        let shifted = value + magic
        let tie = unsafeBitCast((shifted - magic) - value .== SIMD4(repeating: -0.5), to: SIMD4<Int32>.self)
        let rounded = (unsafeBitCast(shifted, to: SIMD4<Int32>.self) &- 0x4B40_0000) &- tie
        let nonNegative = rounded & ~(rounded &>> 31)
        return SIMD4<UInt8>(truncatingIfNeeded: nonNegative | ((255 &- nonNegative) &>> 31))
    }

    static func store(_ row: UnsafePointer<SIMD4<Float>>, width: Int, format: PixelFormat, to out: UnsafeMutablePointer<UInt8>) {
        let raw = UnsafeMutableRawPointer(out)
        switch format {
        case .rgb:
            // Four bytes per pixel, three apart: each store's fourth byte is overwritten by the
            // next pixel's first. The row's last pixel is written bytewise, so no store runs
            // past the row (the next row's first byte is not written yet).
            for x in 0..<(width - 1) { raw.storeBytes(of: bytes(row[x]), toByteOffset: 3 * x, as: SIMD4<UInt8>.self) }
            let last = bytes(row[width - 1])
            (out[3 * width - 3], out[3 * width - 2], out[3 * width - 1]) = (last[0], last[1], last[2])
        case .rgba:
            for x in 0..<width { raw.storeBytes(of: bytes(unpremultiplied(row[x])), toByteOffset: 4 * x, as: SIMD4<UInt8>.self) }
        case .gray:
            for x in 0..<width { out[x] = bytes(row[x])[0] }
        case .grayAlpha:
            for x in 0..<width {
                let pixel = bytes(unpremultiplied(row[x]))
                (out[2 * x], out[2 * x + 1]) = (pixel[0], pixel[3])
            }
        }
    }

    /// Colour divided by alpha again; a pixel whose alpha rounds to 0 is transparent black.
    @inline(__always)
    static func unpremultiplied(_ pixel: SIMD4<Float>) -> SIMD4<Float> {
        let alpha = pixel[3].rounded()
        let scale: Float = alpha <= 0 ? 0 : 255 / pixel[3]
        return pixel * SIMD4(scale, scale, scale, 1)
    }
}
