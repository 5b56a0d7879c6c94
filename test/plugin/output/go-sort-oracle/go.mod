module gosortoracle

go 1.23
