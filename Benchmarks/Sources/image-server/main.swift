import Foundation
import ImageServer

// A loopback image server for the strategy benchmark, in a process of its own so that its
// memory and CPU are not counted against the strategy being measured.
//
// image-server --samples DIR --products N [--latency-ms MS] [--mbit MBIT [--shared-link]] [--photos A.jpg,B.jpg,...]
//              [--upstream URL]
// Serves /products/NNN.jpg (product i is photo i mod count, each its own URL), cacheable for a
// day with an ETag and Last-Modified; prints "listening PORT" once ready; /_control/stats and
// /_control/reset report and zero what it saw. Runs until killed. With --upstream, any other
// path is fetched from URL + path and sent on throttled: the phone's link to a thumbnail
// service (`image-engine serve`) in front of another image-server. --shared-link: MBIT is the
// total of all connections (one phone link), not each connection's.

func option(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[index + 1]
}

let samples = URL(fileURLWithPath: option("--samples") ?? "SampleImages")
let products = Int(option("--products") ?? "120") ?? 120
let names = (option("--photos") ?? "").split(separator: ",").map(String.init)
let latency = Double(option("--latency-ms") ?? "0") ?? 0
let bandwidth = option("--mbit").flatMap(Double.init)
let throttle = latency > 0 || bandwidth != nil
    ? ImageServer.Throttle(latency: .milliseconds(latency), bytesPerSecond: bandwidth.map { Int($0 * 1_000_000 / 8) },
                           sharesLink: CommandLine.arguments.contains("--shared-link"))
    : nil
let photos = try names.map { try Data(contentsOf: samples.appendingPathComponent($0)) }
guard !photos.isEmpty else {
    FileHandle.standardError.write(Data("image-server: --photos names no files\n".utf8))
    exit(64)
}
let server = try await ImageServer.start(throttle: throttle)
let modified = Date(timeIntervalSince1970: 1_700_000_000)
for product in 0..<products {
    server.serve(String(format: "products/%03d.jpg", product),
                 ImageServer.Resource(data: photos[product % photos.count], lastModified: modified, cacheControl: "max-age=86400"))
}
if let upstream = option("--upstream") {
    guard let url = URL(string: upstream) else {
        FileHandle.standardError.write(Data("image-server: --upstream is not a URL\n".utf8))
        exit(64)
    }
    server.forward(to: url)
}
// Unbuffered, so the driver reading the pipe sees it at once.
FileHandle.standardOutput.write(Data("listening \(server.port)\n".utf8))
while true { try await Task.sleep(for: .seconds(3600)) }
