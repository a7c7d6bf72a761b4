import Foundation
import ImageServer
@testable import ImageService
import Testing
import TestSupport

@Suite("Service: metrics and request log", .timeLimit(.minutes(2)))
struct ServiceObservabilityTests {
    /// `name{labels}` → value, from Prometheus text.
    private func samples(_ text: String) throws -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            try #require(parts.count == 2, "not a sample line: \(line)")
            guard let value = Double(String(parts[1])) else {
                Issue.record("not a number: \(line)")
                continue
            }
            samples[String(parts[0])] = value
        }
        return samples
    }

    @Test("Prometheus text parses and its counters move with the requests made")
    func metrics() async throws {
        let harness = try await ServiceHarness.start()
        let before = try samples(try await harness.get("/metrics", metrics: true).text)
        for name in [
            "image_engine_requests_in_progress", "image_engine_workers_busy", "image_engine_coalesced_requests_total",
            "image_engine_source_bytes_total", "image_engine_cache_hits_total{layer=\"result-disk\"}",
            "image_engine_cache_hits_total{layer=\"source-disk\"}"
        ] {
            #expect(before[name] == 0, "\(name) is exported from the start")
        }
        let path = harness.path("rs:fit:80:80", harness.source("kite.jpg"))
        #expect(try await harness.get(path).status == 200)
        #expect(try await harness.get(path).status == 200)
        #expect(try await harness.get(harness.path("rs:fit:81:80", harness.source("kite.jpg"))).status == 200)
        #expect(try await harness.get(harness.path("rs:fit:80:80", harness.source("missing.jpg"))).status == 404)
        let metricsReply = try await harness.get("/metrics", metrics: true)
        #expect(metricsReply.header("Content-Type")?.hasPrefix("text/plain") == true)
        let after = try samples(metricsReply.text)
        #expect(after["image_engine_requests_total{status=\"200\"}"] == 3)
        #expect(after["image_engine_requests_total{status=\"404\"}"] == 1)
        #expect(after["image_engine_request_duration_seconds_count"] == 4)
        #expect(after["image_engine_request_duration_seconds_bucket{le=\"+Inf\"}"] == 4)
        #expect(after["image_engine_cache_hits_total{layer=\"result-memory\"}"] == 1)
        #expect(after["image_engine_cache_hits_total{layer=\"source-memory\"}"] == 1)
        // Once per download (the second size shared the first's source), failed ones included:
        // the origin's 404 page is bytes downloaded, and a download that took time.
        let notFoundPage = "<!doctype html><html><body><h1>404</h1></body></html>".utf8.count
        #expect(after["image_engine_source_bytes_total"] == Double(try SmallPhotos.data("kite.jpg").count + notFoundPage))
        #expect(after["image_engine_process_duration_seconds_count"] == 2 && after["image_engine_download_duration_seconds_count"] == 2)
        #expect(after["image_engine_queue_duration_seconds_count"] == 2)
        #expect(after["image_engine_requests_in_progress"] == 0 && after["image_engine_workers_busy"] == 0)
        await harness.stop()
    }

    @Test("failed source fetches are counted by reason: refused addresses apart from origin and network failures")
    func sourceFailures() async throws {
        let harness = try await ServiceHarness.start { $0.downloadTimeout = 1 }
        harness.origin.setFault("/redirected.jpg", .redirect(location: "http://169.254.169.254/latest/meta-data/"))
        harness.origin.setFault("/broken.jpg", .status(500))
        harness.origin.setFault("/missing.jpg", .status(404))
        harness.origin.setFault("/reset.jpg", .connectionReset)
        harness.origin.setFault("/stalled.jpg", .stall(.seconds(5)))
        let statuses = [
            try await harness.get(harness.path("w:10", harness.source("redirected.jpg"))).status,
            try await harness.get(harness.path("w:10", harness.source("broken.jpg"))).status,
            try await harness.get(harness.path("w:10", harness.source("missing.jpg"))).status,
            try await harness.get(harness.path("w:10", harness.source("reset.jpg"))).status,
            try await harness.get(harness.path("w:10", harness.source("stalled.jpg"))).status,
            try await harness.get(harness.path("w:10", harness.source("kite.jpg"))).status
        ]
        #expect(statuses == [404, 502, 404, 502, 504, 200])
        let samples = try await harness.metricSamples()
        let counted = samples.filter { $0.key.hasPrefix("image_engine_source_failures_total") }
        #expect(
            counted == [
                "image_engine_source_failures_total{reason=\"refused\"}": 1,
                "image_engine_source_failures_total{reason=\"origin_status\"}": 2,
                "image_engine_source_failures_total{reason=\"transfer\"}": 1,
                "image_engine_source_failures_total{reason=\"timeout\"}": 1
            ], "\(counted)")
        await harness.stop()
    }

    @Test("one JSON log line per request: method, path, status, bytes, milliseconds, cache layer")
    func requestLog() async throws {
        let harness = try await ServiceHarness.start()
        let path = harness.path("rs:fit:80:80", harness.source("kite.jpg"))
        let body = try await harness.get(path).body
        _ = try await harness.get(path)
        _ = try await harness.get("/nope")
        let records = harness.logLines.records
        #expect(records.count == 3)
        let first = try #require(records.first)
        #expect(first["method"] as? String == "GET" && first["path"] as? String == path && first["status"] as? Int == 200)
        #expect(first["bytes"] as? Int == body.count && first["cache"] as? String == "origin" && (first["ms"] as? Double ?? -1) >= 0)
        #expect(first["level"] as? String == "info" && (first["message"] as? String)?.hasPrefix("GET /") == true && first["time"] is String)
        #expect(records[1]["cache"] as? String == "result-memory" && records[2]["status"] as? Int == 403)
        await harness.stop()
    }
}
