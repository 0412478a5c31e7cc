package io.rdmaactors.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The layering the modules promise, held by the main code of every module below the examples: the
 * CM event vocabulary at the bottom, the verbs SPI above it, the providers beside each other
 * (found by ServiceLoader, so nothing names them), the actors above the SPI, the testkit on top;
 * and no cycle between any two packages.
 */
@AnalyzeClasses(packages = "io.rdmaactors", importOptions = ImportOption.DoNotIncludeTests.class)
class LayeringTest {

    @ArchTest
    static final ArchRule layers = layeredArchitecture().consideringOnlyDependenciesInLayers()
            .layer("cm events").definedBy("io.rdmaactors.cm..")
            .layer("verbs SPI").definedBy("io.rdmaactors.verbs..")
            .layer("providers").definedBy("io.rdmaactors.soft..", "io.rdmaactors.jna..")
            .layer("actors").definedBy("io.rdmaactors.actors..")
            .layer("testkit").definedBy("io.rdmaactors.testkit..")
            .whereLayer("testkit").mayNotBeAccessedByAnyLayer()
            .whereLayer("actors").mayOnlyBeAccessedByLayers("testkit")
            .whereLayer("providers").mayNotBeAccessedByAnyLayer()
            .whereLayer("verbs SPI").mayOnlyBeAccessedByLayers("providers", "actors", "testkit")
            .whereLayer("cm events").mayOnlyBeAccessedByLayers("verbs SPI", "providers", "actors", "testkit");

    @ArchTest
    static final ArchRule softWithoutJna = noClasses().that().resideInAPackage("io.rdmaactors.soft..")
            .should().dependOnClassesThat().resideInAPackage("io.rdmaactors.jna..");

    @ArchTest
    static final ArchRule jnaWithoutSoft = noClasses().that().resideInAPackage("io.rdmaactors.jna..")
            .should().dependOnClassesThat().resideInAPackage("io.rdmaactors.soft..");

    @ArchTest
    static final ArchRule noCycles = slices().matching("io.rdmaactors.(**)").should().beFreeOfCycles();
}
