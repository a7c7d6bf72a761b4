import Foundation
import Testing
import TestSupport
@_spi(Fuzzing) @testable import ImageCache

/// The cache fuzz targets' seeds and every input they ever flagged, through the same calls: an
/// entry file decodes or is refused; a journal, put in a real cache directory, replays into an
/// index that never counts more than the directory holds.
@Suite("Cache fuzz regressions")
struct CacheFuzzRegressionTests {
    @Test("entry files decode to their own key, or not at all")
    func entries() throws {
        let inputs = try FuzzInputs.files(for: "disk-cache-entry")
        #expect(inputs.count >= 3)
        for (name, data) in inputs {
            if let entry = FuzzingEntryPoints.decodeEntryFile(data) {
                #expect(EntryFile.encode(key: entry.key, metadata: entry.metadata, data: entry.data).reduce(Data(), +) == data, "\(name)")
            }
        }
    }

    @Test("journals replay into an index that matches the directory")
    func journals() throws {
        let inputs = try FuzzInputs.files(for: "journal-replay")
        #expect(inputs.count >= 3)
        for (name, journal) in inputs {
            let directory = try TemporaryDirectory()
            do {
                let seed = try DiskCache(directory: directory.url)
                try seed.setValue(payload(1, size: 100), forKey: "https://cdn.example.com/a.jpg")
                try seed.setValue(payload(2, size: 101), forKey: "b")
            }
            try journal.write(to: directory.file("journal"))
            let cache = try DiskCache(directory: directory.url)
            #expect(try cache.value(forKey: "b") == payload(2, size: 101), "\(name)")
            #expect(cache.statistics.totalBytes == CacheDirectoryContents.bytesOnDisk(directory.url), "\(name)")
            let report = try cache.verify()
            #expect(report.corrupt.isEmpty, "\(name): \(report)")
        }
    }
}
