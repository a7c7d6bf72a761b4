/// What the resampler computes with: one gray sample (`Float`) or up to four channels
/// (`SIMD4<Float>`, alpha always in lane 3). Specialising on it keeps gray images from paying
/// for four lanes.
protocol ResamplePixel: Sendable {
    static var zero: Self { get }
    static func + (lhs: Self, rhs: Self) -> Self
    static func += (lhs: inout Self, rhs: Self)
    static func * (lhs: Float, rhs: Self) -> Self
    /// Bytes of `format` → pixels, premultiplying alpha.
    static func load(_ row: UnsafePointer<UInt8>, width: Int, format: PixelFormat, into pixels: UnsafeMutablePointer<Self>)
    /// Pixel → bytes of `format`, undoing premultiplication; Lanczos lobes overshoot, so
    /// values are clamped to 0...255 before rounding.
    static func store(_ value: Self, format: PixelFormat, to out: UnsafeMutablePointer<UInt8>)
}

extension Float: ResamplePixel {
    static func load(_ row: UnsafePointer<UInt8>, width: Int, format: PixelFormat, into pixels: UnsafeMutablePointer<Float>) {
        for x in 0..<width { pixels[x] = Float(row[x]) }
    }

    @inline(__always)
    static func store(_ value: Float, format: PixelFormat, to out: UnsafeMutablePointer<UInt8>) {
        out[0] = UInt8(Swift.min(Swift.max(value + 0.5, 0), 255))
    }
}

extension SIMD4: ResamplePixel where Scalar == Float {
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
            // Four bytes at a time (lane 3 is the next pixel's red and is never used); the last
            // pixel is read bytewise so the row is not overrun.
            let raw = UnsafeRawPointer(row)
            for x in 0..<(width - 1) {
                pixels[x] = SIMD4<Float>(raw.loadUnaligned(fromByteOffset: 3 * x, as: SIMD4<UInt8>.self))
            }
            let last = 3 * (width - 1)
            pixels[width - 1] = SIMD4(Float(row[last]), Float(row[last + 1]), Float(row[last + 2]), 0)
        case .rgba:
            let raw = UnsafeRawPointer(row)
            for x in 0..<width {
                let pixel = SIMD4<Float>(raw.loadUnaligned(fromByteOffset: 4 * x, as: SIMD4<UInt8>.self))
                let alpha = pixel[3] * (1 / 255)
                pixels[x] = pixel * SIMD4(alpha, alpha, alpha, 1)
            }
        }
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, format: PixelFormat, to out: UnsafeMutablePointer<UInt8>) {
        var pixel = value
        if format.hasAlpha {
            let alpha = pixel[3].rounded()
            let scale: Float = alpha <= 0 ? 0 : 255 / pixel[3]
            pixel *= SIMD4(scale, scale, scale, 1)
        }
        let rounded = pixel + 0.5
        // Lane by lane: SIMD's clamped(lowerBound:upperBound:) stayed two out-of-line calls per
        // pixel (4% of a thumbnail batch in perf).
        @inline(__always) func byte(_ lane: Int) -> UInt8 { UInt8(Swift.min(Swift.max(rounded[lane], 0), 255)) }
        switch format {
        case .gray:
            out[0] = byte(0)
        case .grayAlpha:
            out[0] = byte(0)
            out[1] = byte(3)
        case .rgb:
            out[0] = byte(0); out[1] = byte(1); out[2] = byte(2)
        case .rgba:
            out[0] = byte(0); out[1] = byte(1); out[2] = byte(2); out[3] = byte(3)
        }
    }
}
