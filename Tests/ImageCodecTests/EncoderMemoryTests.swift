@testable import ImageCodec
import Testing

@Suite("Encoder memory")
struct EncoderMemoryTests {
    @Test("each encoder's planned bytes cover what it was measured to hold at 1024² and 2048², and never overflow")
    func plannedBytes() {
        // Peak RSS over a JPEG of the same pixels (the closing note of the service issue):
        // WebP +53 MB at 2048², AVIF +87 MB at 2048² and +35 MB at 1024².
        #expect(ImageEncoder.plannedBytes(width: 2048, height: 2048, channels: 3, format: .webp) >= 53_000_000)
        #expect(ImageEncoder.plannedBytes(width: 2048, height: 2048, channels: 3, format: .avif) >= 87_000_000)
        #expect(ImageEncoder.plannedBytes(width: 1024, height: 1024, channels: 3, format: .avif) >= 35_000_000)
        #expect(
            ImageEncoder.plannedBytes(width: 512, height: 512, channels: 4, format: .png)
                >= ImageEncoder.plannedBytes(width: 512, height: 512, channels: 3, format: .png))
        #expect(ImageEncoder.plannedBytes(width: .max, height: 2, channels: 3, format: .avif) == .max)
        #expect(ImageEncoder.plannedBytes(width: -5, height: 10, channels: 3, format: .jpeg) == 1 << 20)
    }
}
