module ballast.tightlinesoftware.com/hack/admission-load

go 1.26
