package io.rdmaactors.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The benchmarks' results as PNG charts beside their text: latency percentile curves, as
 * HdrHistogram plots them (the x axis spreads the nines: 90%, 99%, 99.9% equally apart), and
 * rates as bars, each series against its peer.
 */
final class BenchCharts {

    private static final int WIDTH = 800;
    private static final int HEIGHT = 500;

    private BenchCharts() {
    }

    /** Latency by percentile, one curve per series (microseconds on a log scale). */
    static Path percentiles(Path dir, String file, String title, Map<String, Histogram> series) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("percentile").yAxisTitle("latency (us)").build();
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        // x is log10(1 / (1 - p)): each further nine moves one unit right
        chart.getStyler().setxAxisTickLabelsFormattingFunction(x -> percentileLabel(1 - Math.pow(10, -x)));
        series.forEach((name, histogram) -> {
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (HistogramIterationValue v : histogram.percentiles(5)) {
                double p = v.getPercentileLevelIteratedTo() / 100.0;
                if (p >= 0.999999) {
                    break;
                }
                x.add(-Math.log10(1 - p));
                y.add(Math.max(v.getValueIteratedTo() / 1000.0, 0.001));
            }
            chart.addSeries(name, x, y).setMarker(SeriesMarkers.NONE);
        });
        return save(chart, dir, file);
    }

    private static String percentileLabel(double p) {
        double percent = p * 100;
        int decimals = Math.max(0, (int) Math.ceil(-Math.log10(1 - p)) - 2);
        return String.format("%." + decimals + "f%%", percent);
    }

    /** One group of bars per category, one bar per series. */
    static Path bars(Path dir, String file, String title, String yAxis, List<String> categories,
                     Map<String, double[]> series) {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .yAxisTitle(yAxis).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        series.forEach((name, medians) -> chart.addSeries(name, categories, toList(medians)));
        return save(chart, dir, file);
    }

    private static List<Double> toList(double[] values) {
        return Arrays.stream(values).boxed().toList();
    }

    private static Path save(Chart<?, ?> chart, Path dir, String file) {
        try {
            Files.createDirectories(dir);
            Path png = dir.resolve(file);
            BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
            return png;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
